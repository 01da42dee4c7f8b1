// Package cline is the provider for Cline's rules. In reference mode that is
// the nearest .clinerules found searching upward from cwd (cwd itself first, up to the
// filesystem root). A directory contributes its *.md files in file name
// order, each named after its file (subdirectories such as hooks/ and
// workflows/ are not rules); a file is one rule named "clinerules". All are
// project rules.
package cline

import (
	"context"
	"io/fs"
	"path"

	"github.com/rulebroker/rulebroker/plugin"
)

// FileRuleName is the name of the rule a .clinerules file becomes.
const FileRuleName = "clinerules"

type provider struct{}

// New returns the cline provider.
func New() plugin.Provider { return provider{} }

// Info names the provider; 40 puts Cline's rules after every other built-in.
func (provider) Info() plugin.Info {
	return plugin.Info{Name: "cline", Version: "0.1.0", Priority: 40}
}

// Discover loads the nearest .clinerules.
func (provider) Discover(ctx context.Context, req plugin.Request) (plugin.Result, error) {
	var res plugin.Result
	if req.Cwd == "" {
		return res, nil
	}
	if req.Activation == plugin.ModeNative {
		return discoverNative(ctx, req)
	}
	p, info, warning := nearest(ctx, req.FS, req.Cwd, ".clinerules")
	if warning != nil {
		res.Warnings = append(res.Warnings, *warning)
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if info == nil {
		return res, nil
	}
	var files []plugin.File
	var warnings []plugin.Warning
	switch {
	case info.IsDir():
		files, warnings = plugin.LoadDir(req.FS, p, ".md")
	case info.Mode().IsRegular():
		files, warnings = plugin.LoadFiles(req.FS, []string{p})
		for i := range files {
			files[i].Name = FileRuleName
		}
	default:
		warnings = []plugin.Warning{{Path: p, Message: "neither a file nor a directory; skipped"}}
	}
	rules, more := plugin.ParseRules(files, plugin.LevelProject)
	res.Rules = rules
	res.Warnings = append(append(res.Warnings, warnings...), more...)
	return res, nil
}

// nearest walks from cwd up to the root (".") and returns the first
// .clinerules that exists (following symlinks). A path it cannot inspect
// (permission, I/O) stops the search with a warning: a farther .clinerules
// might not be the nearest one, so loading it would be a guess.
//
// names are the rule locations looked for in each directory, in order; the
// first found wins.
func nearest(ctx context.Context, fsys fs.FS, cwd string, names ...string) (string, fs.FileInfo, *plugin.Warning) {
	for dir := path.Clean(cwd); ctx.Err() == nil; dir = path.Dir(dir) {
		for _, name := range names {
			p := path.Join(dir, name)
			info, err := fs.Stat(fsys, p)
			switch {
			case err == nil:
				return p, info, nil
			case !plugin.IsAbsent(err):
				return "", nil, &plugin.Warning{Path: p, Message: "cannot inspect: " + plugin.ErrorCause(err) + "; .clinerules search stopped here"}
			}
		}
		if dir == "." {
			return "", nil, nil
		}
	}
	return "", nil, nil
}
