// Package windsurf is the provider for Windsurf's rule files. In reference mode it reads:
//
//   - user:    ~/.codeium/windsurf/memories/global_rules.md, one rule named
//     "global_rules"
//   - project: <cwd>/.windsurf/rules/*.md, named after the file
//
// The user rule comes first, then the project rules in file name order. The
// legacy .windsurfrules file is not read in reference mode (the reference never read it); a warning says so when
// one is there. That is the reference mode; native mode (native.go) reads
// the rules the way Windsurf does.
package windsurf

import (
	"context"
	"path"

	"github.com/rulebroker/rulebroker/plugin"
)

// GlobalRuleName is the fixed name of the user-level rule.
const GlobalRuleName = "global_rules"

type provider struct{}

// New returns the windsurf provider.
func New() plugin.Provider { return provider{} }

// Info names the provider. It shares priority 50 with cursor and is
// registered after it.
func (provider) Info() plugin.Info {
	return plugin.Info{Name: "windsurf", Version: "0.1.0", Priority: 50}
}

// Discover loads global_rules, then the project rules.
func (provider) Discover(ctx context.Context, req plugin.Request) (plugin.Result, error) {
	if req.Activation == plugin.ModeNative {
		return discoverNative(ctx, req)
	}
	var res plugin.Result
	if req.Home != "" {
		files, warnings := plugin.LoadFiles(req.FS, []string{path.Join(req.Home, ".codeium/windsurf/memories/global_rules.md")})
		rules, more := plugin.ParseRules(files, plugin.LevelUser)
		for i := range rules {
			rules[i].Name = GlobalRuleName
		}
		res.Rules = append(res.Rules, rules...)
		res.Warnings = append(append(res.Warnings, warnings...), more...)
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if req.Cwd != "" {
		rules, warnings := plugin.LoadRules(req.FS, path.Join(req.Cwd, ".windsurf/rules"), plugin.LevelProject, ".md")
		res.Rules = append(res.Rules, rules...)
		res.Warnings = append(res.Warnings, warnings...)
		res.Warnings = append(res.Warnings, plugin.WarnIfPresent(req.FS, path.Join(req.Cwd, ".windsurfrules"),
			"legacy .windsurfrules is not read; move its rules to .windsurf/rules/*.md")...)
	}
	return res, nil
}
