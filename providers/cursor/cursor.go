// Package cursor is the provider for Cursor's rule files. In reference mode it reads:
//
//   - user:    ~/.cursor/rules/*.{mdc,md}
//   - project: <cwd>/.cursor/rules/*.{mdc,md}
//   - nested:  <dir>/.cursor/rules/*.{mdc,md} for each directory below cwd
//     the host says the agent has worked in (Request.ExtraDirs)
//
// User rules come first, then project rules, each directory in file name
// order; a rule is named after its file without the extension. The legacy
// .cursorrules file is not read in reference mode (the reference never read it); a warning says so when one is
// there. That is the reference mode; native mode (native.go) reads the rules
// the way Cursor does.
package cursor

import (
	"context"
	"path"

	"github.com/rulebroker/rulebroker/plugin"
)

type provider struct{}

// New returns the cursor provider.
func New() plugin.Provider { return provider{} }

// Info names the provider. Cursor and windsurf share priority 50; the broker
// registers cursor first, so cursor wins a tie.
func (provider) Info() plugin.Info {
	return plugin.Info{Name: "cursor", Version: "0.1.0", Priority: 50}
}

// Discover loads the user rules, then the project rules.
func (provider) Discover(ctx context.Context, req plugin.Request) (plugin.Result, error) {
	if req.Activation == plugin.ModeNative {
		return discoverNative(ctx, req)
	}
	var res plugin.Result
	var user string
	if req.Home != "" {
		user = path.Join(req.Home, ".cursor/rules")
		load(&res, req, user, plugin.LevelUser)
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	// When cwd is the home directory, the project directory is the user
	// directory: list its rules once, not twice.
	if project := path.Join(req.Cwd, ".cursor/rules"); req.Cwd != "" && project != user {
		load(&res, req, project, plugin.LevelProject)
	}
	extraDirRules(&res, req)
	if req.Cwd != "" {
		res.Warnings = append(res.Warnings, plugin.WarnIfPresent(req.FS, path.Join(req.Cwd, ".cursorrules"),
			"legacy .cursorrules is not read; move its rules to .cursor/rules/*.mdc")...)
	}
	return res, nil
}

func load(res *plugin.Result, req plugin.Request, dir string, level plugin.Level) {
	rules, warnings := plugin.LoadRules(req.FS, dir, level, ".mdc", ".md")
	res.Rules = append(res.Rules, rules...)
	res.Warnings = append(res.Warnings, warnings...)
}

// extraDirRules loads <dir>/.cursor/rules for each directory the host says
// the agent has worked in (Request.ExtraDirs, below cwd), as project rules
// after cwd's, so nested rule directories join a session when the agent
// first works there, as Cursor applies a nested .cursor/rules to the files
// under it. It does so in every activation mode: a host that does not track
// touched directories sends none, and then nothing changes.
func extraDirRules(res *plugin.Result, req plugin.Request) {
	for _, dir := range req.ExtraDirs {
		load(res, req, path.Join(dir, ".cursor/rules"), plugin.LevelProject)
	}
}
