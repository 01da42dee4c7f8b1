package plugin

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Helpers for providers that, in ModeNative, find and activate rules the way
// their tool does.

// MaxTreeFiles and MaxTreeDepth bound LoadTree. A rule tree is usually a
// handful of files a few folders deep, but some repositories keep thousands
// of generated rules in one folder; the file bound is the host's default cap
// on rules per provider, so any folder the flat, reference-mode read loads
// loads here too, while a checked-in node_modules-like tree still cannot
// cost the whole discovery.
const (
	MaxTreeFiles = 100_000
	MaxTreeDepth = 16
)

// LoadTree loads the rule files in dir and in every subdirectory below it
// whose names end in one of exts, in path order (a/b.mdc before a/c/d.mdc
// before b.mdc), as Cursor reads .cursor/rules. Names starting with "." are
// skipped, files and folders alike; symlinked files are followed as in
// LoadDir, symlinked folders are not (so a link cycle cannot loop). A missing
// dir has no files. Past MaxTreeFiles files or MaxTreeDepth levels the rest
// is left out with a warning naming the cap.
func LoadTree(fsys fs.FS, dir string, exts ...string) ([]File, []Warning) {
	return loadTree(fsys, dir, MaxTreeFiles, exts...)
}

func loadTree(fsys fs.FS, dir string, maxFiles int, exts ...string) ([]File, []Warning) {
	dir = path.Clean(dir)
	t := tree{fsys: fsys, exts: exts}
	t.walk(dir, 1)
	slices.Sort(t.paths)
	if len(t.paths) > maxFiles {
		t.warnings = append(t.warnings, Warning{Path: dir, Message: fmt.Sprintf(
			"more than %d rule files below this folder (the cap); only the first %d in path order are read", maxFiles, maxFiles)})
		t.paths = t.paths[:maxFiles]
	}
	files, more := LoadFiles(fsys, t.paths)
	return files, append(t.warnings, more...)
}

type tree struct {
	fsys     fs.FS
	exts     []string
	paths    []string
	warnings []Warning
}

// walk adds dir's rule files, then those of its subfolders, listing each
// folder once.
func (t *tree) walk(dir string, depth int) {
	entries, w := readDir(t.fsys, dir)
	if w != nil {
		t.warnings = append(t.warnings, *w)
		return
	}
	paths, warnings := ruleFiles(t.fsys, dir, entries, t.exts)
	t.paths = append(t.paths, paths...)
	t.warnings = append(t.warnings, warnings...)
	for _, e := range entries {
		if len(t.paths) > MaxTreeFiles {
			return
		}
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		sub := path.Join(dir, e.Name())
		if depth >= MaxTreeDepth {
			t.warnings = append(t.warnings, Warning{Path: sub, Message: fmt.Sprintf(
				"more than %d folder levels below the rules folder (the cap); not searched", MaxTreeDepth)})
			continue
		}
		t.walk(sub, depth+1)
	}
}

// ProjectDirs returns the directories whose project rules apply to a
// session: the workspace root, every directory between it and cwd, and cwd,
// in that order; then, for each of req.ExtraDirs below cwd, the directories
// between cwd and it. Each appears once. When cwd is not below the workspace
// root (or there is none), the list starts at cwd.
func ProjectDirs(req Request) []string {
	if req.Cwd == "" {
		return nil
	}
	cwd := path.Clean(req.Cwd)
	var out []string
	seen := map[string]bool{}
	add := func(dirs []string) {
		for _, d := range dirs {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	root := cwd
	if req.WorkspaceRoot != "" && Within(path.Clean(req.WorkspaceRoot), cwd) {
		root = path.Clean(req.WorkspaceRoot)
	}
	add(between(root, cwd))
	for _, extra := range req.ExtraDirs {
		if extra = path.Clean(extra); Within(cwd, extra) {
			add(between(cwd, extra))
		}
	}
	return out
}

// between lists top, the directories below it down to dir, and dir; dir must
// be within top.
func between(top, dir string) []string {
	var down []string
	for d := dir; ; d = path.Dir(d) {
		down = append(down, d)
		if d == top || d == "." {
			break
		}
	}
	slices.Reverse(down)
	return down
}

// Within reports whether name is dir or below it (both clean names in one
// FS).
func Within(dir, name string) bool {
	return dir == "." || name == dir || strings.HasPrefix(name, dir+"/")
}

// ToolActivation gives r the activation of Cursor's four rule types, which
// the native .xcsh rules and Windsurf rules without a trigger share:
// alwaysApply → always; globs → attached (the rulebook also lists it when it
// has a description); a description alone → requested; nothing → manual.
// tool names the tool in ActivationSource ("cursor: globs").
func ToolActivation(r *Rule, tool string) {
	switch {
	case r.AlwaysApply:
		r.Activation, r.ActivationSource = ActivationAlways, tool+": alwaysApply: true"
	case len(r.Globs) > 0:
		r.Activation, r.ActivationSource = ActivationAttached, tool+": globs"
	case strings.TrimSpace(r.Description) != "":
		r.Activation, r.ActivationSource = ActivationRequested, tool+": description"
	default:
		r.Activation, r.ActivationSource = ActivationManual, tool+": no alwaysApply, globs or description"
	}
}

// DropDuplicateNames keeps the first rule of each name, in order, and
// returns a warning for each later one: within one provider a name means one
// rule (rule://NAME must say which), and the first in path order wins.
func DropDuplicateNames(rules []Rule) ([]Rule, []Warning) {
	first := map[string]string{}
	var kept []Rule
	var warnings []Warning
	for _, r := range rules {
		if p, dup := first[r.Name]; dup {
			warnings = append(warnings, Warning{Path: r.Path, Message: fmt.Sprintf(
				"rule name %q is already used by %s; this file is not loaded (rename it to load both)", r.Name, p)})
			continue
		}
		first[r.Name] = r.Path
		kept = append(kept, r)
	}
	return kept, warnings
}

// LoadAlwaysRule loads the single file at name as one always rule called
// ruleName, its globs relative to base, with source saying why it always
// applies: the shape of a tool's legacy or global rule file (.cursorrules,
// .windsurfrules, Windsurf's global rules, a .clinerules file). A missing
// file gives no rule and no warning.
func LoadAlwaysRule(fsys fs.FS, name string, level Level, ruleName, base, source string) ([]Rule, []Warning) {
	files, warnings := LoadFiles(fsys, []string{name})
	var rules []Rule
	for _, f := range files {
		r, more := ParseRule(f, level)
		r.Name, r.GlobBase = ruleName, base
		r.Activation, r.ActivationSource = ActivationAlways, source
		rules = append(rules, r)
		warnings = append(warnings, more...)
	}
	return rules, warnings
}

// LegacyRoot is where a tool's legacy rule file is read: the workspace root,
// or cwd when the host gave none.
func LegacyRoot(req Request) string {
	if req.WorkspaceRoot != "" {
		return path.Clean(req.WorkspaceRoot)
	}
	return req.Cwd
}
