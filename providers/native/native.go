// Package native is the provider for rulebroker's own rules, the ".xcsh"
// files of spec/002 §2:
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
func (provider) Discover(ctx context.Context, req plugin.Request) (plugin.Result, error) {
	var res plugin.Result
	dirs := []struct {
		base, rel string
		level     plugin.Level
	}{
		{req.Cwd, ".xcsh/rules", plugin.LevelProject},
		{req.Home, ".xcsh/agent/rules", plugin.LevelUser},
	}
	for _, d := range dirs {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if d.base == "" {
			continue // no home (or cwd) given: nothing to look at
		}
		rules, warnings := plugin.LoadRules(req.FS, path.Join(d.base, d.rel), d.level, ".md", ".mdc")
		res.Rules = append(res.Rules, rules...)
		res.Warnings = append(res.Warnings, warnings...)
	}
	return res, nil
}
