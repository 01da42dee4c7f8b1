package ruleset

import (
	"reflect"
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

// SameRule compares field by field; changing any one field of the rule, or
// the provider, must make it another rule.
func TestSameRuleComparesEveryField(t *testing.T) {
	base := Rule{Rule: shared.Rule{Name: "n", Path: "/p", Content: "c", Globs: []string{"*.go"}, AlwaysApply: false,
		Description: "d", Condition: []string{"x"}, Level: shared.LevelProject, Activation: shared.ActivationAlways,
		ActivationSource: "s", GlobBase: "/b"}, Provider: "cursor"}
	if !SameRule(base, base) {
		t.Fatal("a rule differs from itself")
	}
	v := reflect.ValueOf(&base.Rule).Elem()
	for i := range v.NumField() {
		other := base
		f := reflect.ValueOf(&other.Rule).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(f.String() + "!")
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Slice:
			f.Set(reflect.Append(reflect.MakeSlice(f.Type(), 0, 1), reflect.ValueOf("other")))
		default:
			t.Fatalf("field %s has a kind this test does not change: add it", v.Type().Field(i).Name)
		}
		if SameRule(base, other) {
			t.Errorf("SameRule ignores a change of %s", v.Type().Field(i).Name)
		}
	}
	other := base
	other.Provider = "windsurf"
	if SameRule(base, other) {
		t.Error("SameRule ignores the provider")
	}
	// No globs and an empty list of globs are the same rule.
	a, b := base, base
	a.Globs, b.Globs = nil, []string{}
	if !SameRule(a, b) {
		t.Error("nil and empty globs differ")
	}
}
