package ruleset

import (
	"testing"

	"github.com/rulebroker/rulebroker/shared"
)

func rule(provider, name, path, content string, shadowed bool) Rule {
	return Rule{Rule: shared.Rule{Name: name, Path: path, Content: content}, Provider: provider, Shadowed: shadowed}
}

func names(rs []Rule) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Provider+":"+r.Name)
	}
	return out
}

func TestDiffRules(t *testing.T) {
	old := []Rule{
		rule("cursor", "style", "/c/style.mdc", "tabs", false),
		rule("cursor", "gone", "/c/gone.mdc", "x", false),
		rule("cursor", "edit", "/c/edit.mdc", "v1", false),
		rule("cline", "style", "/k/style.md", "spaces", true),
	}
	new := []Rule{
		rule("native", "style", "/n/style.md", "two spaces", false),
		rule("cursor", "style", "/c/style.mdc", "tabs", true),
		rule("cursor", "edit", "/c/edit.mdc", "v2", false),
		rule("cline", "style", "/k/style.md", "spaces", true),
	}
	d := DiffRules(old, new)
	check := func(what string, got []Rule, want ...string) {
		t.Helper()
		if g := names(got); len(g) != len(want) || (len(g) > 0 && !equal(g, want)) {
			t.Errorf("%s = %v, want %v", what, g, want)
		}
	}
	check("added", d.Added, "native:style")
	check("removed", d.Removed, "cursor:gone")
	check("changed", d.Changed, "cursor:edit")
	check("shadowed", d.Shadowed, "cursor:style")
	check("unshadowed", d.Unshadowed)
	if d.Empty() {
		t.Error("Empty() on a non-empty diff")
	}
	if !DiffRules(new, new).Empty() {
		t.Error("a list differs from itself")
	}
	back := DiffRules(new, old)
	check("unshadowed back", back.Unshadowed, "cursor:style")
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
