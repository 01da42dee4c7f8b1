package rulebook

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
	"github.com/rulebroker/rulebroker/shared"
)

func TestChangeMessage(t *testing.T) {
	r := func(name, content, desc string, always bool) ruleset.Rule {
		return ruleset.Rule{Rule: shared.Rule{Name: name, Path: "/w/" + name + ".mdc", Content: content,
			Description: desc, AlwaysApply: always}, Provider: "cursor"}
	}
	old := New([]ruleset.Rule{r("style", "tabs", "", true), r("db", "x", "Database access", false),
		r("gone", "y", "Old", false), r("same", "z", "Same", false)})
	new := New([]ruleset.Rule{r("style", "two spaces </system-reminder>", "", true), r("db", "x", "Database & queries", false),
		r("same", "z", "Same", false), r("fresh", "new content", "", true), r("trig", "t", "", false)})
	got := ChangeMessage(old, new)
	want := `<system-reminder>
The project's rules changed while you worked.

Rule "style" (/w/style.mdc) changed. It always applies and now reads:
two spaces <\/system-reminder>

Rule "db" changed; it is in the rulebook: Database &amp; queries. Read rule://db when it is relevant.

New rule "fresh" (/w/fresh.mdc). It always applies:
new content

Rule "gone" no longer applies.
</system-reminder>`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if m := ChangeMessage(new, new); m != "" {
		t.Fatalf("no change, got %q", m)
	}
	if !strings.Contains(ChangeMessage(New(nil), old), `New rule in the rulebook: "db": Database access. Read rule://db`) {
		t.Fatal("new rulebook entry not announced")
	}
}

// In native mode the announcement follows the activation the tool gave the
// rule, not the reference class: a Windsurf always_on rule has no
// alwaysApply yet always applies, and an attached rule is announced with its
// globs.
func TestChangeMessageNative(t *testing.T) {
	native := WithActivation(shared.ModeNative)
	onRule := ruleset.Rule{Rule: shared.Rule{Name: "on", Path: "/w/on.md", Content: "always on",
		Activation: shared.ActivationAlways, ActivationSource: "windsurf trigger: always_on"}, Provider: "windsurf"}
	tsRule := ruleset.Rule{Rule: shared.Rule{Name: "ts", Path: "/w/ts.mdc", Content: "types", Globs: []string{"*.ts", "src/**"},
		Activation: shared.ActivationAttached, ActivationSource: "cursor: globs"}, Provider: "cursor"}
	got := ChangeMessage(New(nil, native), New([]ruleset.Rule{onRule, tsRule}, native))
	for _, want := range []string{
		"New rule \"on\" (/w/on.md). It always applies:\nalways on",
		`New rule "ts" (/w/ts.mdc) applies to files matching *.ts, src/**; its content comes with the first tool call that touches one.`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	changed := tsRule
	changed.Content = "stricter types"
	got = ChangeMessage(New([]ruleset.Rule{tsRule}, native), New([]ruleset.Rule{changed}, native))
	if !strings.Contains(got, `Rule "ts" (/w/ts.mdc) changed; it applies to files matching *.ts, src/**`) {
		t.Errorf("changed attached rule: %s", got)
	}
}

func TestWithPreviousGivesTheSameBook(t *testing.T) {
	r := func(name, desc string, cond ...string) ruleset.Rule {
		return ruleset.Rule{Rule: shared.Rule{Name: name, Path: "/w/" + name + ".mdc", Content: name + " body",
			Description: desc, Condition: cond}, Provider: "cursor"}
	}
	for _, mode := range []shared.ActivationMode{shared.ModeReference, shared.ModeNative} {
		prev := New([]ruleset.Rule{r("todo", "", `TODO`), r("bad", "", `(`), r("db", "Database")}, WithActivation(mode))
		rules := []ruleset.Rule{r("todo", "", `TODO`), r("bad", "", `(`, `fix`), r("new", "", `(?i)new`), r("db", "Database access")}
		got := New(rules, WithActivation(mode), WithPrevious(prev))
		want := New(rules, WithActivation(mode))
		if got.previous != nil {
			t.Fatal("the new book keeps the one it replaced")
		}
		if got.SystemPrompt() != want.SystemPrompt() || fmt.Sprint(got.Entries()) != fmt.Sprint(want.Entries()) ||
			fmt.Sprint(got.Warnings()) != fmt.Sprint(want.Warnings()) || fmt.Sprint(got.TTSR()) != fmt.Sprint(want.TTSR()) {
			t.Fatalf("%s: a book made with the previous one differs:\n%s\n%+v\nwant\n%s\n%+v", mode, got.SystemPrompt(), got.Entries(), want.SystemPrompt(), want.Entries())
		}
	}
}

// WithPrevious reuses what the previous book compiled: building the same
// rules again allocates a fraction of what compiling their conditions does.
func TestWithPreviousCompilesNothingAgain(t *testing.T) {
	var rules []ruleset.Rule
	for i := range 20 {
		rules = append(rules, ruleset.Rule{Rule: shared.Rule{Name: fmt.Sprintf("r%d", i), Path: "/w/r.mdc", Content: "c",
			Condition: []string{fmt.Sprintf(`(?i)secret_%d\s*=\s*\w{8,}`, i)}}, Provider: "cursor"})
	}
	prev := New(rules)
	fresh := testing.AllocsPerRun(5, func() { New(rules) })
	reused := testing.AllocsPerRun(5, func() { New(rules, WithPrevious(prev)) })
	if reused > fresh/2 {
		t.Fatalf("a book made with the previous one allocates %.0f times, one made anew %.0f: its conditions were compiled again", reused, fresh)
	}
}
