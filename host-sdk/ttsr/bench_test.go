package ttsr

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
	"github.com/rulebroker/rulebroker/shared"
)

// benchTemplates are shaped like real TTSR conditions: literal phrases,
// (?i) phrases, identifiers with word boundaries, alternations, and a few
// patterns with no required literal. %d makes each rule distinct; the
// corpus below contains none of them, so nothing fires.
var benchTemplates = []string{
	`console\.log\(\s*"dbg%d`,
	`(?i)\bdeprecated_api_%d\b`,
	`(?i)never use legacy client %d`,
	`\bpanic\("unreachable %d"\)`,
	`(?:rm|rmdir) -rf /srv/data%d`,
	`import\s+"internal/unsafe%d"`,
	`(?i)api[_-]?key_%d\s*[:=]`,
	`TODO\(ticket-%d\)`,
	`\bfoo%dbar\w*`,
	`[A-Z]{3}-%d[0-9]{6}`,
}

// benchCorpus is prose and code of the kind a model streams.
const benchCorpus = `The handler reads the request, validates the payload and writes the result.
func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if err := s.store.Put(ctx, key, value); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
}
Next, we update the tests so that each case covers one behaviour, and we run them with -race.
`

func benchRules(n int) []ruleset.Rule {
	rules := make([]ruleset.Rule, n)
	for i := range rules {
		p := fmt.Sprintf(benchTemplates[i%len(benchTemplates)], i)
		rules[i] = ruleset.Rule{Rule: shared.Rule{Name: fmt.Sprintf("rule-%d", i), Path: "/r.mdc", Content: "x", Condition: []string{p}}}
	}
	return rules
}

// BenchmarkFeed measures one more 16-byte delta after the turn has already
// streamed 1 KiB or 1 MiB. For 1 KiB the turn is restarted and refilled every
// 64 deltas (untimed), so the output stays between 1 and 2 KiB; for 1 MiB it
// only grows.
func BenchmarkFeed(b *testing.B) {
	const delta = 16
	corpus := strings.Repeat(benchCorpus, 1<<20/len(benchCorpus)+2)
	for _, pre := range []struct {
		name string
		size int
	}{{"out=1KiB", 1 << 10}, {"out=1MiB", 1 << 20}} {
		for _, nr := range []int{10, 500} {
			for _, pf := range []struct {
				name string
				opts []Option
			}{{"prefilter", nil}, {"noprefilter", []Option{WithoutPrefilter()}}} {
				b.Run(fmt.Sprintf("%s/rules=%d/%s", pre.name, nr, pf.name), func(b *testing.B) {
					m := New(benchRules(nr), pf.opts...)
					if len(m.Warnings()) != 0 {
						b.Fatal(m.Warnings())
					}
					fill := func() int {
						m.TurnStart()
						for i := 0; i < pre.size; i += 4096 {
							if ms := m.Feed("text", corpus[i:min(i+4096, pre.size)]); len(ms) != 0 {
								b.Fatalf("fired: %+v", ms)
							}
						}
						return pre.size
					}
					pos := fill()
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						if pre.size < 1<<20 && pos >= 2*pre.size {
							b.StopTimer()
							pos = fill()
							b.StartTimer()
						}
						if pos+delta > len(corpus) {
							pos = len(corpus) % len(benchCorpus) // keep streaming the same kind of text
						}
						if ms := m.Feed("text", corpus[pos:pos+delta]); len(ms) != 0 {
							b.Fatalf("fired: %+v", ms)
						}
						pos += delta
					}
				})
			}
		}
	}
}
