// Command rulebroker-provider-team is a complete third-party rule provider: it
// serves the markdown rules a team keeps in <workspace root>/.team/rules.
// Build it into a plugin directory and every rulebroker host picks it up:
//
//	go build -o ~/.rulebroker/plugins/rulebroker-provider-team ./examples/provider-team
package main

import (
	"context"
	"path"

	"github.com/rulebroker/rulebroker/plugin"
)

type team struct{}

func (team) Info() plugin.Info {
	// Priority 60 ranks between native (100) and cursor/windsurf (50).
	return plugin.Info{Name: "team", Version: "1.0.0", Priority: 60}
}

func (team) Discover(_ context.Context, req plugin.Request) (plugin.Result, error) {
	var res plugin.Result
	// Paths are names in req.FS: WorkspaceRoot is e.g. "home/u/repo".
	files, warnings := plugin.LoadDir(req.FS, path.Join(req.WorkspaceRoot, ".team/rules"), ".md")
	res.Warnings = warnings
	for _, f := range files {
		rule, warnings := plugin.ParseRule(f, plugin.LevelProject)
		res.Rules = append(res.Rules, rule)
		res.Warnings = append(res.Warnings, warnings...)
	}
	return res, nil
}

func main() { plugin.Serve(team{}) }
