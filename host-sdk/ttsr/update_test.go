package ttsr

import (
	"slices"
	"testing"

	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
)

func TestUpdateKeepsFiringStateByName(t *testing.T) {
	m := New([]ruleset.Rule{mkRule("todo", `TODO`), mkRule("gone", `GONE`)})
	if got := names(m.Feed("text", "TODO ")); !slices.Equal(got, []string{"todo"}) {
		t.Fatalf("before the update: fired %v", got)
	}
	m.TurnStart()

	set, _ := Compile([]ruleset.Rule{mkRule("todo", `TODO|FIXME`), mkRule("new", `(?i)password`)})
	m.Update(set)
	if got := m.Rules(); !slices.Equal(got, []string{"todo", "new"}) {
		t.Fatalf("rules after the update = %v", got)
	}
	// todo was edited, not reset: it already fired this session.
	if got := names(m.Feed("text", "FIXME TODO GONE ")); len(got) != 0 {
		t.Fatalf("an edited rule fired again, or a removed one fired: %v", got)
	}
	if got := names(m.Feed("text", "the PassWord is")); !slices.Equal(got, []string{"new"}) {
		t.Fatalf("a new rule did not fire: %v", got)
	}
}

func TestUpdateMidMatch(t *testing.T) {
	m := New(nil)
	m.Feed("text", "api_k")
	set, _ := Compile([]ruleset.Rule{mkRule("secret", `api_key\s*=`)})
	m.Update(set)
	// The text streamed before the update still counts: the match completes.
	if got := names(m.Feed("text", "ey = 1")); !slices.Equal(got, []string{"secret"}) {
		t.Fatalf("fired %v, want the match across the update", got)
	}
}
