package windsurf

import (
	"context"
	"fmt"
	"path"

	"github.com/rulebroker/rulebroker/plugin"
)

// LegacyRuleName is the name of the rule a workspace's .windsurfrules
// becomes in native mode.
const LegacyRuleName = "windsurfrules"

// discoverNative reads the rules as Windsurf applies them:
//
//   - user: global_rules.md, always applied;
//   - project: .windsurf/rules/*.md in the workspace root and in every
//     directory from there down to cwd (Windsurf reads them up to the
//     repository root), activated by their `trigger:` — always_on → always,
//     model_decision → requested, glob → attached (globs relative to the
//     directory holding that .windsurf), manual → manual; a rule without a
//     trigger is read by Cursor's fields, as rules copied from Cursor are
//     written;
//   - the legacy .windsurfrules at the workspace root, an always rule named
//     "windsurfrules", after the directory rules.
//
// A name used twice among the project rules keeps the first, with a warning.
func discoverNative(ctx context.Context, req plugin.Request) (plugin.Result, error) {
	var res plugin.Result
	if req.Home != "" {
		rules, warnings := plugin.LoadAlwaysRule(req.FS, path.Join(req.Home, ".codeium/windsurf/memories/global_rules.md"),
			plugin.LevelUser, GlobalRuleName, "", "windsurf: global rules")
		res.Rules = append(res.Rules, rules...)
		res.Warnings = append(res.Warnings, warnings...)
	}
	var project []plugin.Rule
	for _, dir := range plugin.ProjectDirs(req) {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		files, warnings := plugin.LoadDir(req.FS, path.Join(dir, ".windsurf/rules"), ".md")
		res.Warnings = append(res.Warnings, warnings...)
		for _, f := range files {
			rf := plugin.ParseRuleFile(f, plugin.LevelProject, "trigger")
			activate(&rf)
			rf.Rule.GlobBase = dir
			project = append(project, rf.Rule)
			res.Warnings = append(res.Warnings, rf.Warnings...)
		}
	}
	if root := plugin.LegacyRoot(req); root != "" {
		rules, warnings := plugin.LoadAlwaysRule(req.FS, path.Join(root, ".windsurfrules"), plugin.LevelProject, LegacyRuleName, root, ".windsurfrules")
		project = append(project, rules...)
		res.Warnings = append(res.Warnings, warnings...)
	}
	project, dups := plugin.DropDuplicateNames(project)
	res.Rules = append(res.Rules, project...)
	res.Warnings = append(res.Warnings, dups...)
	return res, nil
}

// activate maps Windsurf's trigger onto the rule's activation.
func activate(rf *plugin.RuleFile) {
	r := &rf.Rule
	if !rf.Has("trigger") {
		plugin.ToolActivation(r, "windsurf: no trigger; cursor")
		return
	}
	trigger, ok := rf.String("trigger")
	source := "windsurf trigger: " + trigger
	switch {
	case !ok:
		plugin.ToolActivation(r, "windsurf: unreadable trigger; cursor")
	case trigger == "always_on":
		r.Activation, r.ActivationSource = plugin.ActivationAlways, source
	case trigger == "model_decision":
		r.Activation, r.ActivationSource = plugin.ActivationRequested, source
		if r.Description == "" {
			rf.Warnings = append(rf.Warnings, plugin.Warning{Path: r.Path,
				Message: "trigger: model_decision without a description: the model is offered the rule by name only"})
		}
	case trigger == "glob":
		r.Activation, r.ActivationSource = plugin.ActivationAttached, source
		if len(r.Globs) == 0 {
			r.Activation, r.ActivationSource = plugin.ActivationManual, source+" without globs"
			rf.Warnings = append(rf.Warnings, plugin.Warning{Path: r.Path,
				Message: "trigger: glob without globs: no file can attach the rule, so it is manual (rule://" + r.Name + ")"})
		}
	case trigger == "manual":
		r.Activation, r.ActivationSource = plugin.ActivationManual, source
	default:
		plugin.ToolActivation(r, "windsurf: unknown trigger; cursor")
		rf.Warnings = append(rf.Warnings, plugin.Warning{Path: r.Path, Message: fmt.Sprintf(
			"trigger: %q is not one of always_on, model_decision, glob, manual; the rule is read by its other fields (%s)", trigger, r.Activation)})
	}
}
