package ttsr

import (
	"slices"
	"testing"

	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
	"github.com/rulebroker/rulebroker/shared"
)

func TestCompileOnceManyManagers(t *testing.T) {
	bad := mkRule("bad", `(`, `ok\d`)
	bad.Provider = "cursor"
	plain := ruleset.Rule{Rule: shared.Rule{Name: "plain"}}
	set, warns := Compile([]ruleset.Rule{bad, plain, mkRule("none", `a*`), mkRule("todo", `TODO`)})
	// One skip each for "bad" and "none", and "none" never fires.
	if len(warns) != 3 || warns[0].Source != "cursor" || warns[0].Path != bad.Path {
		t.Fatalf("warnings: %+v", warns)
	}
	if set.Len() != 4 || !slices.Equal(set.Rule(0).Rule.Condition, []string{`ok\d`}) || len(set.Rule(0).Skipped) != 1 ||
		set.Rule(1).Usable() || set.Rule(2).Usable() || !set.Rule(3).Usable() {
		t.Fatalf("per-rule results wrong")
	}
	// Two managers over one Set keep their own firing state.
	a, b := set.NewManager(), set.NewManager()
	if len(a.Warnings()) != 0 || !slices.Equal(a.Rules(), []string{"bad", "todo"}) {
		t.Fatalf("manager: %v %v", a.Warnings(), a.Rules())
	}
	if ms := a.Feed("text", "TODO ok1"); len(ms) != 2 {
		t.Fatalf("a: %+v", ms)
	}
	if ms := a.Feed("text", " TODO ok2"); len(ms) != 0 {
		t.Fatalf("a fired twice: %+v", ms)
	}
	if ms := b.Feed("text", "TODO"); len(ms) != 1 || ms[0].Rule != "todo" {
		t.Fatalf("b shares a's state: %+v", ms)
	}
}

func TestRecompileReusesWhatItCompiledAndAgreesWithCompile(t *testing.T) {
	before := []ruleset.Rule{mkRule("todo", `TODO\b`), mkRule("bad", `(`, `fix(me)?`), mkRule("gone", `gone`)}
	prev, _ := Compile(before)
	after := []ruleset.Rule{mkRule("todo", `TODO\b`), mkRule("bad", `(`, `fix(me)?`), mkRule("new", `(?i)new thing`)}
	got, gotWarns := prev.Recompile(after)
	want, wantWarns := Compile(after)
	if got.compiled[`TODO\b`].re != prev.compiled[`TODO\b`].re || got.compiled[`fix(me)?`].re != prev.compiled[`fix(me)?`].re {
		t.Fatal("a pattern the previous Set compiled was compiled again")
	}
	if got.exact == prev.exact {
		t.Fatal("a Set with other literals shares the previous literal index")
	}
	if again, _ := got.Recompile(after); again.exact != got.exact || again.folded != got.folded {
		t.Fatal("a Set with the same literals builds its literal indexes again")
	}
	if _, kept := got.compiled["gone"]; kept {
		t.Fatal("the new Set keeps a pattern no rule has any more")
	}
	if len(gotWarns) != len(wantWarns) || gotWarns[0] != wantWarns[0] {
		t.Fatalf("warnings %+v, want %+v", gotWarns, wantWarns)
	}
	for i := range after {
		if !slices.Equal(got.Rule(i).Rule.Condition, want.Rule(i).Rule.Condition) || len(got.Rule(i).Skipped) != len(want.Rule(i).Skipped) {
			t.Fatalf("rule %d: %+v, want %+v", i, got.Rule(i), want.Rule(i))
		}
	}
	for _, text := range []string{"a TODO here", "fixme", "A NEW THING", "gone"} {
		a, b := got.NewManager().Feed("s", text), want.NewManager().Feed("s", text)
		if len(a) != len(b) || (len(a) > 0 && a[0].Rule != b[0].Rule) {
			t.Fatalf("%q: recompiled %+v, compiled %+v", text, a, b)
		}
	}
}
