// Package native is the provider for rulebroker's own rules, the ".xcsh"
// files. In reference mode it reads:
//
//   - project: <cwd>/.xcsh/rules/*.{md,mdc}
//   - user:    ~/.xcsh/agent/rules/*.{md,mdc}
//
// Project rules come first, then user rules, each directory in file name
// order; a rule is named after its file without .md/.mdc.
package native

import (
	"context"
	"path"

	"github.com/rulebroker/rulebroker/plugin"
)

type provider struct{}

// New returns the native provider.
func New() plugin.Provider { return provider{} }

// Info names the provider; 100 puts native rules ahead of every other source.
func (provider) Info() plugin.Info {
	return plugin.Info{Name: "native", Version: "0.1.0", Priority: 100}
}

// Discover loads the project rules, then the user rules.
//
// In native mode the project rules come from .xcsh/rules in the workspace
// root and in every directory from there down to cwd (root first, each
// rule's globs relative to the directory holding that .xcsh), a name used
// twice among them keeping the first; and every rule gets the activation of
// Cursor's four rule types (alwaysApply → always, globs → attached, a
// description → requested, nothing → manual).
func (provider) Discover(ctx context.Context, req plugin.Request) (plugin.Result, error) {
	var res plugin.Result
	native := req.Activation == plugin.ModeNative
	type source struct {
		base, rel string
		level     plugin.Level
	}
	dirs := []source{{req.Cwd, ".xcsh/rules", plugin.LevelProject}}
	if native {
		dirs = nil
		for _, d := range plugin.ProjectDirs(req) {
			dirs = append(dirs, source{d, ".xcsh/rules", plugin.LevelProject})
		}
	}
	dirs = append(dirs, source{req.Home, ".xcsh/agent/rules", plugin.LevelUser})
	var project []plugin.Rule
	for _, d := range dirs {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if native && d.level == plugin.LevelUser {
			// The project rules are complete: drop repeated names before
			// the user rules follow.
			kept, dups := plugin.DropDuplicateNames(project)
			res.Rules = append(res.Rules, kept...)
			res.Warnings = append(res.Warnings, dups...)
		}
		if d.base == "" {
			continue // no home (or cwd) given: nothing to look at
		}
		rules, warnings := plugin.LoadRules(req.FS, path.Join(d.base, d.rel), d.level, ".md", ".mdc")
		res.Warnings = append(res.Warnings, warnings...)
		if !native {
			res.Rules = append(res.Rules, rules...)
			continue
		}
		for i := range rules {
			plugin.ToolActivation(&rules[i], "xcsh")
			if d.level == plugin.LevelProject {
				rules[i].GlobBase = d.base
			}
		}
		if d.level == plugin.LevelProject {
			project = append(project, rules...)
			continue
		}
		res.Rules = append(res.Rules, rules...)
	}
	return res, nil
}
