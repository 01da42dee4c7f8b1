package cursor

import (
	"context"
	"path"

	"github.com/rulebroker/rulebroker/plugin"
)

// LegacyRuleName is the name of the rule a workspace's .cursorrules becomes
// in native mode.
const LegacyRuleName = "cursorrules"

// discoverNative reads the rules as Cursor applies them:
//
//   - user: ~/.cursor/rules and its subfolders;
//   - project: .cursor/rules and its subfolders in the workspace root and in
//     every directory from there down to cwd (and to the directories the
//     agent worked in), each rule's globs relative to the directory holding
//     that .cursor;
//   - the legacy .cursorrules at the workspace root, an always rule named
//     "cursorrules", after the directory rules.
//
// Every rule gets the activation of Cursor's four rule types. A name used
// twice among the project rules keeps the first in path order, with a
// warning.
func discoverNative(ctx context.Context, req plugin.Request) (plugin.Result, error) {
	var res plugin.Result
	var user string
	if req.Home != "" {
		user = path.Join(req.Home, ".cursor/rules")
		rules, warnings := loadTree(req, user, plugin.LevelUser, "")
		res.Rules, res.Warnings = rules, warnings
	}
	var project []plugin.Rule
	for _, dir := range plugin.ProjectDirs(req) {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		rules := path.Join(dir, ".cursor/rules")
		if rules == user {
			continue // cwd is home: its rules are the user's, listed once
		}
		found, warnings := loadTree(req, rules, plugin.LevelProject, dir)
		project = append(project, found...)
		res.Warnings = append(res.Warnings, warnings...)
	}
	if root := plugin.LegacyRoot(req); root != "" {
		rules, warnings := plugin.LoadAlwaysRule(req.FS, path.Join(root, ".cursorrules"), plugin.LevelProject, LegacyRuleName, root, ".cursorrules")
		project = append(project, rules...)
		res.Warnings = append(res.Warnings, warnings...)
	}
	project, dups := plugin.DropDuplicateNames(project)
	res.Rules = append(res.Rules, project...)
	res.Warnings = append(res.Warnings, dups...)
	return res, nil
}

func loadTree(req plugin.Request, dir string, level plugin.Level, base string) ([]plugin.Rule, []plugin.Warning) {
	files, warnings := plugin.LoadTree(req.FS, dir, ".mdc", ".md")
	rules, more := plugin.ParseRules(files, level)
	for i := range rules {
		plugin.ToolActivation(&rules[i], "cursor")
		rules[i].GlobBase = base
	}
	return rules, append(warnings, more...)
}
