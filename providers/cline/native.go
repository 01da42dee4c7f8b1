package cline

import (
	"context"
	"path"

	"github.com/rulebroker/rulebroker/plugin"
)

// discoverNative reads the nearest Cline rules as Cline applies them. The
// search is the reference one, except that a .cline/rules directory counts
// as a .clinerules directory (Cline accepts both; .clinerules wins in one
// directory). Cline applies every active rule file, so each rule is always
// applied — the single-file form, a file without frontmatter, and one whose
// frontmatter has no paths — except that a `paths:` list (Cline's
// conditional rules) makes it attached, its globs relative to the directory
// holding the rules folder.
func discoverNative(ctx context.Context, req plugin.Request) (plugin.Result, error) {
	var res plugin.Result
	p, info, warning := nearest(ctx, req.FS, req.Cwd, ".clinerules", ".cline/rules")
	if warning != nil {
		res.Warnings = append(res.Warnings, *warning)
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if info == nil {
		return res, nil
	}
	base := path.Dir(p)
	if path.Base(p) == "rules" {
		base = path.Dir(base) // .cline/rules: the directory holding .cline
	}
	switch {
	case info.IsDir():
		files, warnings := plugin.LoadDir(req.FS, p, ".md")
		res.Warnings = append(res.Warnings, warnings...)
		for _, f := range files {
			rf := plugin.ParseRuleFile(f, plugin.LevelProject, "paths")
			r := &rf.Rule
			r.GlobBase = base
			switch paths := rf.Globs("paths"); {
			case len(paths) > 0:
				r.Globs = paths
				r.Activation, r.ActivationSource = plugin.ActivationAttached, "cline: paths"
			case !rf.Frontmatter:
				r.Activation, r.ActivationSource = plugin.ActivationAlways, "cline: no frontmatter"
			default:
				r.Activation, r.ActivationSource = plugin.ActivationAlways, "cline: frontmatter without paths"
			}
			res.Rules = append(res.Rules, *r)
			res.Warnings = append(res.Warnings, rf.Warnings...)
		}
	case info.Mode().IsRegular():
		rules, warnings := plugin.LoadAlwaysRule(req.FS, p, plugin.LevelProject, FileRuleName, base, "cline: .clinerules file")
		res.Rules = append(res.Rules, rules...)
		res.Warnings = append(res.Warnings, warnings...)
	default:
		res.Warnings = append(res.Warnings, plugin.Warning{Path: p, Message: "neither a file nor a directory; skipped"})
	}
	return res, nil
}
