package broker

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
	"github.com/rulebroker/rulebroker/shared"
)

func rules(names ...string) []shared.Rule {
	out := make([]shared.Rule, len(names))
	for i, n := range names {
		name, path, _ := strings.Cut(n, "@")
		out[i] = shared.Rule{Name: name, Path: path}
	}
	return out
}

// order renders a merge as "provider:name" (with a trailing "!" when shadowed).
func order(merged []ruleset.Rule) []string {
	var out []string
	for _, r := range merged {
		s := r.Provider + ":" + r.Name
		if r.Shadowed {
			s += "!"
		}
		out = append(out, s)
	}
	return out
}

func TestMergeOrdersByPriorityThenRegistration(t *testing.T) {
	t.Parallel()
	got := order(first(merge([]providerRules{
		{Name: "cline", Priority: 40, Order: 3, Rules: rules("c")},
		{Name: "windsurf", Priority: 50, Order: 2, Rules: rules("w")},
		{Name: "cursor", Priority: 50, Order: 1, Rules: rules("u")},
		{Name: "native", Priority: 100, Order: 0, Rules: rules("n")},
	})))
	want := []string{"native:n", "cursor:u", "windsurf:w", "cline:c"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestMergeEqualPrioritiesKeepRegistrationOrder(t *testing.T) {
	t.Parallel()
	// Registered b before a, both 50: b's rule wins the shared name.
	got := order(first(merge([]providerRules{
		{Name: "b", Priority: 50, Order: 0, Rules: rules("x")},
		{Name: "a", Priority: 50, Order: 1, Rules: rules("x")},
	})))
	want := []string{"b:x", "a:x!"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestMergeShadowsAcrossAndWithinProviders(t *testing.T) {
	t.Parallel()
	merged, _ := merge([]providerRules{
		{Name: "native", Priority: 100, Order: 0, Rules: rules("style@/p/.xcsh/rules/style.md", "style@/h/.xcsh/agent/rules/style.md")},
		{Name: "cursor", Priority: 50, Order: 1, Rules: rules("style@/p/.cursor/rules/style.mdc", "tests@/p/.cursor/rules/tests.mdc")},
	})
	want := []string{"native:style", "native:style!", "cursor:style!", "cursor:tests"}
	if got := order(merged); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if merged[2].ShadowedBy != "/p/.xcsh/rules/style.md" {
		t.Errorf("shadowed rule should name the winner, got %q", merged[2].ShadowedBy)
	}
	active := Result{Rules: merged}.Active()
	if len(active) != 2 || active[0].Path != "/p/.xcsh/rules/style.md" || active[1].Name != "tests" {
		t.Errorf("active = %+v", active)
	}
}

func TestMergeWithPriorityOverride(t *testing.T) {
	t.Parallel()
	// Load applies overrides before merging; an overridden cline outranks native.
	got := order(first(merge([]providerRules{
		{Name: "native", Priority: 100, Order: 0, Rules: rules("x")},
		{Name: "cline", Priority: 150, Order: 3, Rules: rules("x")},
	})))
	want := []string{"cline:x", "native:x!"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestPluginDirsOrder(t *testing.T) {
	t.Parallel()
	got := PluginDirs([]string{"/a", "/b/"}, "/c:/a::/d", "/home/u")
	want := []string{"/a", "/b", "/c", "/d", "/home/u/.rulebroker/plugins"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestFindBinariesOrderAndHiding(t *testing.T) {
	t.Parallel()
	d1, d2 := t.TempDir(), t.TempDir()
	for _, f := range []string{d1 + "/rulebroker-provider-zeta", d1 + "/rulebroker-provider-alpha", d1 + "/other-tool",
		d2 + "/rulebroker-provider-alpha", d2 + "/rulebroker-provider-beta"} {
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(d2+"/rulebroker-provider-dir", 0o755); err != nil {
		t.Fatal(err)
	}
	found, hidden, problems := findBinaries([]string{d1, filepath.Join(d1, "missing"), d2})
	var got []string
	for _, c := range found {
		got = append(got, c.path)
	}
	want := []string{d1 + "/rulebroker-provider-alpha", d1 + "/rulebroker-provider-zeta", d2 + "/rulebroker-provider-beta"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("found %v, want %v", got, want)
	}
	if !reflect.DeepEqual(hidden, []string{d2 + "/rulebroker-provider-alpha"}) {
		t.Errorf("hidden = %v", hidden)
	}
	if len(problems) != 0 {
		t.Errorf("a missing plugin directory is not a problem: %v", problems)
	}
}

func first[A, B any](a A, _ B) A { return a }

// Names that look the same are one name: trimmed, and compared in NFC, so
// the later copy is shadowed instead of becoming a second rule.
func TestMergeNamesAreTrimmedAndNFC(t *testing.T) {
	t.Parallel()
	nfc, nfd := "caf\u00e9", "cafe\u0301"
	merged, warnings := merge([]providerRules{
		{Name: "native", Priority: 100, Order: 0, Rules: rules(nfc+"@/n/cafe.md", "style@/n/style.md")},
		{Name: "cursor", Priority: 50, Order: 1, Rules: rules(nfd+"@/c/cafe.mdc", "style  @/c/style.mdc", "\tstyle\n@/c/style2.mdc")},
	})
	got := order(merged)
	want := []string{"native:" + nfc, "native:style", "cursor:" + nfc + "!", "cursor:style!", "cursor:style!"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if merged[2].ShadowedBy != "/n/cafe.md" || merged[3].ShadowedBy != "/n/style.md" {
		t.Errorf("shadowed by %q, %q", merged[2].ShadowedBy, merged[3].ShadowedBy)
	}
	if len(warnings) != 0 {
		t.Errorf("clean names gave warnings: %v", warnings)
	}
}

// A name that still holds invisible characters after normalisation is kept,
// but the warning names the file and the characters.
func TestMergeWarnsOfInvisibleNameCharacters(t *testing.T) {
	t.Parallel()
	merged, warnings := merge([]providerRules{{Name: "cursor", Priority: 50, Rules: rules(
		"style\u200b@/c/zw.mdc", "sty\u202ele@/c/bidi.mdc", "a\x1b[2Kb@/c/esc.mdc", "ok@/c/ok.mdc")}})
	if len(merged) != 4 || merged[0].Shadowed {
		t.Fatalf("merged %v", order(merged))
	}
	if len(warnings) != 3 {
		t.Fatalf("want 3 warnings, got %v", warnings)
	}
	for i, want := range []struct{ path, char string }{{"/c/zw.mdc", "U+200B"}, {"/c/bidi.mdc", "U+202E"}, {"/c/esc.mdc", "U+001B"}} {
		w := warnings[i]
		if w.Path != want.path || w.Source != "cursor" || !strings.Contains(w.Message, want.char) || !strings.Contains(w.Message, "invisible") {
			t.Errorf("warning %d: %+v, want path %s and %s", i, w, want.path, want.char)
		}
		if strings.ContainsAny(w.Message, "\u200b\u202e\x1b") {
			t.Errorf("warning %d prints the character raw: %q", i, w.Message)
		}
	}
}
