package ttsr

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
)

// TestAgainstFullRescan checks the windowed matcher against the obvious
// implementation (rescan the whole turn after every delta) on random text,
// random delta splits (including inside multi-byte runes) and patterns whose
// matches are shorter than the window: the same rules must fire on the same
// delta with the same matched text.
func TestAgainstFullRescan(t *testing.T) {
	pats := []string{`ab+c`, `\bab`, `^a`, `(?m)^b`, `c\B`, `(?i)AB`, `a.c`, `x$`, `éa`, `(?i)ſa`, `[xé]{2}`, `\bc\b`, `a|bé`, `xx+`}
	var rules []ruleset.Rule
	var res []*regexp.Regexp
	for i, p := range pats {
		rules = append(rules, mkRule(fmt.Sprint(i), p))
		res = append(res, regexp.MustCompile(p))
	}
	alphabet := []string{"a", "b", "c", "x", " ", "\n", "é", "S", "ſ", "A"}
	rng := rand.New(rand.NewPCG(1, 2))
	// Compile once: what is under test is each manager's incremental scan.
	set, _ := Compile(rules)
	for iter := range 200 {
		var sb strings.Builder
		for range 20 + rng.IntN(200) {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		text := sb.String()
		var deltas []string
		for i := 0; i < len(text); {
			n := 1 + rng.IntN(12)
			deltas = append(deltas, text[i:min(i+n, len(text))])
			i += n
		}
		for _, opts := range [][]Option{{WithWindow(16)}, {WithWindow(16), WithoutPrefilter()}} {
			m := set.NewManager(opts...)
			fired := make([]bool, len(res))
			var buf string
			for di, d := range deltas {
				buf += d
				complete := buf[:completeEnd([]byte(buf), 0)]
				var want []string
				for i, re := range res {
					if fired[i] {
						continue
					}
					if loc := re.FindStringIndex(complete); loc != nil {
						fired[i] = true
						want = append(want, fmt.Sprintf("%d:%q", i, complete[loc[0]:loc[1]]))
					}
				}
				var got []string
				for _, x := range m.Feed("s", d) {
					got = append(got, fmt.Sprintf("%s:%q", x.Rule, x.Text))
				}
				if strings.Join(got, " ") != strings.Join(want, " ") {
					t.Fatalf("iter %d, delta %d of %q (deltas %q): got %v, want %v", iter, di, text, deltas, got, want)
				}
			}
		}
	}
}

// FuzzFeed: any pattern, text and split must not panic, and the prefilter
// must not change which rules fire. Run with go test -fuzz FuzzFeed.
func FuzzFeed(f *testing.F) {
	f.Add(`(?i)hello\b`, "say HELLO there", uint8(3), uint8(8))
	f.Add(`^a|b$`, "xxab\xffé", uint8(1), uint8(4))
	f.Fuzz(func(t *testing.T, pat, text string, chunk, window uint8) {
		rules := []ruleset.Rule{mkRule("r", pat), mkRule("q", `q+u`)}
		a := New(rules, WithWindow(int(window)))
		b := New(rules, WithWindow(int(window)), WithoutPrefilter())
		step := int(chunk%16) + 1
		var ga, gb []string
		for i := 0; i < len(text); i += step {
			d := text[i:min(i+step, len(text))]
			for _, x := range a.Feed("s", d) {
				ga = append(ga, x.Rule+x.Text)
			}
			for _, x := range b.Feed("s", d) {
				gb = append(gb, x.Rule+x.Text)
			}
		}
		if strings.Join(ga, "\x00") != strings.Join(gb, "\x00") {
			t.Fatalf("prefilter %q, without %q", ga, gb)
		}
	})
}
