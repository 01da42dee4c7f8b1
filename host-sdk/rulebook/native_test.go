package rulebook

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
	"github.com/rulebroker/rulebroker/shared"
)

func act(a shared.Activation, src string) func(*shared.Rule) {
	return func(x *shared.Rule) { x.Activation, x.ActivationSource = a, src }
}
func globs(g ...string) func(*shared.Rule) { return func(x *shared.Rule) { x.Globs = g } }

func TestActivation(t *testing.T) {
	for _, tc := range []struct {
		name        string
		rule        ruleset.Rule
		mode        shared.ActivationMode
		wantAct     shared.Activation
		wantSrc     string
		wantClass   Class
		wantWarning string
	}{
		// Reference mode derives the activation from the class and ignores
		// what a provider says.
		{"reference always", r("x", always), shared.ModeReference, shared.ActivationAlways, "reference: alwaysApply", ClassAlways, ""},
		{"reference rulebook", r("x", desc("d")), shared.ModeReference, shared.ActivationRequested, "reference: description", ClassRulebook, ""},
		{"reference ttsr", r("x", cond("a")), shared.ModeReference, shared.ActivationTTSR, "reference: condition", ClassTTSR, ""},
		{"reference none", r("x", act(shared.ActivationAlways, "windsurf trigger: always_on")), shared.ModeReference, shared.ActivationNone,
			"reference: no description, alwaysApply or condition", ClassNone, ""},
		// Native mode follows the provider.
		{"native from the provider", r("x", act(shared.ActivationAlways, "windsurf trigger: always_on")), shared.ModeNative,
			shared.ActivationAlways, "windsurf trigger: always_on", ClassNone, ""},
		{"native manual", r("x", act(shared.ActivationManual, "cursor: nothing")), shared.ModeNative, shared.ActivationManual, "cursor: nothing", ClassNone, ""},
		{"native: a condition still makes a trigger", r("x", all(cond("a"), act(shared.ActivationRequested, "cursor: description"))), shared.ModeNative,
			shared.ActivationTTSR, "condition", ClassTTSR, ""},
		{"native: no activation from the provider", r("x", desc("d")), shared.ModeNative, shared.ActivationRequested, "reference: description", ClassRulebook, ""},
		{"native: no content", r("x", all(act(shared.ActivationAlways, "cline: no frontmatter"), func(x *shared.Rule) { x.Content = " \n" })),
			shared.ModeNative, shared.ActivationNone, "it has no content", ClassNone, ""},
		{"native: attached without globs", r("x", act(shared.ActivationAttached, "team: globs")), shared.ModeNative,
			shared.ActivationManual, "team: globs, but no globs", ClassNone, ""},
		{"native: unknown activation", r("x", all(desc("d"), act("sometimes", "team"))), shared.ModeNative,
			shared.ActivationRequested, "reference: description", ClassRulebook, `unknown activation "sometimes"`},
		{"native: no source", r("x", act(shared.ActivationAlways, "")), shared.ModeNative, shared.ActivationAlways, "cursor", ClassNone, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := New([]ruleset.Rule{tc.rule}, WithActivation(tc.mode))
			e := b.Entries()[0]
			if e.Activation != tc.wantAct || e.ActivationSource != tc.wantSrc || e.Class != tc.wantClass {
				t.Errorf("entry = %s (%s) class %s, want %s (%s) class %s", e.Activation, e.ActivationSource, e.Class, tc.wantAct, tc.wantSrc, tc.wantClass)
			}
			w := b.Warnings()
			if tc.wantWarning == "" && len(w) != 0 || tc.wantWarning != "" && (len(w) != 1 || !strings.Contains(w[0].Message, tc.wantWarning)) {
				t.Errorf("warnings = %v, want %q", w, tc.wantWarning)
			}
		})
	}
}

func nativeBook() *Book {
	return New([]ruleset.Rule{
		r("style", all(always, act(shared.ActivationAlways, "cursor: alwaysApply: true"))),
		r("web", all(desc("Web <ui>"), globs("*.tsx"), act(shared.ActivationAttached, "cursor: globs"))),
		r("sql", all(globs("db/*.sql"), act(shared.ActivationAttached, "cline: paths"))),
		r("review", all(desc("Review"), act(shared.ActivationRequested, "cursor: description"))),
		r("scratch", act(shared.ActivationManual, "cursor: no alwaysApply, globs or description")),
		r("trip", all(cond("todo"), act(shared.ActivationManual, "cursor: nothing"))),
		r("empty", all(act(shared.ActivationAlways, "cline: no frontmatter"), func(x *shared.Rule) { x.Content = "" })),
	}, WithActivation(shared.ModeNative))
}

func TestNativePrompt(t *testing.T) {
	got := nativeBook().SystemPrompt()
	want := "Body of style.\n\n# Rules\n\n" + rulesIntro + "\n\n<rules>\n" +
		"  <rule name=\"web\">\n    <description>Web &lt;ui&gt;</description>\n    <glob>*.tsx</glob>\n  </rule>\n" +
		"  <rule name=\"review\">\n    <description>Review</description>\n  </rule>\n</rules>\n\n" +
		"# Attached rules\n\n" + attachedIntro + "\n\n<attached-rules>\n" +
		"  <rule name=\"web\">\n    <glob>*.tsx</glob>\n    <description>Web &lt;ui&gt;</description>\n  </rule>\n" +
		"  <rule name=\"sql\">\n    <glob>db/*.sql</glob>\n  </rule>\n</attached-rules>\n"
	if got != want {
		t.Errorf("prompt:\n%s\nwant:\n%s", got, want)
	}
}

func TestNativeListsNotesAndResolve(t *testing.T) {
	b := nativeBook()
	names := func(rs []ruleset.Rule) []string {
		out := []string{}
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return out
	}
	if got := names(b.Attached()); !slices.Equal(got, []string{"web", "sql"}) {
		t.Errorf("attached = %v", got)
	}
	if got := names(b.Manual()); !slices.Equal(got, []string{"scratch"}) {
		t.Errorf("manual = %v", got)
	}
	if got := names(b.TTSR()); !slices.Equal(got, []string{"trip"}) {
		t.Errorf("ttsr = %v", got)
	}
	if got := names(b.Unclassified()); !slices.Equal(got, []string{"empty"}) {
		t.Errorf("none = %v", got)
	}
	var notes []string
	for _, n := range b.Notes() {
		notes = append(notes, n.Message)
	}
	wantNotes := []string{
		`rule "scratch" is manual: only an explicit rule://scratch brings it in (cursor: no alwaysApply, globs or description)`,
		`rule "empty" is unreachable: it has no content`,
	}
	if !slices.Equal(notes, wantNotes) {
		t.Errorf("notes = %q\nwant    %q", notes, wantNotes)
	}
	// rule:// reaches every rule with content, in native mode.
	if got := b.Available(); !slices.Equal(got, []string{"review", "scratch", "sql", "style", "trip", "web"}) {
		t.Errorf("available = %v", got)
	}
	res, err := b.Resolve("rule://trip")
	if err != nil || res.Activation != shared.ActivationTTSR || res.Class != ClassTTSR || res.Content != "Body of trip." {
		t.Errorf("rule://trip = %+v, %v", res, err)
	}
	if _, err := b.Resolve("rule://empty"); !errors.Is(err, ErrUnknownRule) {
		t.Errorf("rule://empty: %v", err)
	}
	// The same rules in reference mode: only rulebook and always-apply.
	var rules []ruleset.Rule
	for _, e := range b.Entries() {
		rules = append(rules, e.Rule)
	}
	if got := New(rules).Available(); !slices.Equal(got, []string{"review", "style", "web"}) {
		t.Errorf("reference available = %v", got)
	}
}
