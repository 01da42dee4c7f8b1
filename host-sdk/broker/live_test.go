package broker

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rulebroker/rulebroker/host-sdk/diag"
	"github.com/rulebroker/rulebroker/host-sdk/lifecycle"
	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
	"github.com/rulebroker/rulebroker/host-sdk/workfs/workfstest"
	"github.com/rulebroker/rulebroker/shared"
)

// fakeClock is a settable clock for backoff and the racy-timestamp guard.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func startLive(t *testing.T, m shared.HostFS, clock *fakeClock, builtins ...Builtin) *Live {
	t.Helper()
	l, err := Start(context.Background(), Options{Builtins: builtins, FS: m, Timeout: 10 * time.Second},
		shared.DiscoverRequest{Cwd: "/w"}, WithClock(clock.now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pids := livePIDs(l)
		l.Close()
		for _, pid := range pids {
			if processAlive(pid) {
				t.Errorf("provider pid %d outlived Close", pid)
			}
		}
	})
	return l
}

func livePIDs(l *Live) []int {
	var out []int
	for _, p := range l.Result().Providers {
		if p.PID != 0 {
			out = append(out, p.PID)
		}
	}
	return out
}

// settled is a clock an hour after the Mem's last write: nothing is racy.
func settled(m *workfstest.Mem) *fakeClock { return &fakeClock{t: m.Now().Add(time.Hour)} }

func refresh(t *testing.T, l *Live, touched ...string) Change {
	t.Helper()
	ch, err := l.Refresh(context.Background(), touched)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func TestLiveNothingChangedRunsNoDiscover(t *testing.T) {
	t.Parallel()
	m := testFS()
	m.WriteFile("/w/rules/a.md", []byte("a"))
	l := startLive(t, m, settled(m), testBuiltin("one", 50, ""), testBuiltin("lister", 40, "list"))
	if got := l.Discovers(); got != 2 {
		t.Fatalf("Start ran %d discoveries, want 2", got)
	}
	// The first touch below cwd reaches a new directory: every provider is
	// asked again, once.
	if ch := refresh(t, l, "/w/rules/a.md"); len(ch.Discovered) != 2 {
		t.Fatalf("a new touched directory: %+v", ch)
	}
	for range 3 {
		if ch := refresh(t, l, "/w/rules/a.md"); !ch.Rules.Empty() || len(ch.Discovered) != 0 || ch.Message != "" {
			t.Fatalf("nothing changed, yet %+v", ch)
		}
	}
	if got := l.Discovers(); got != 4 {
		t.Fatalf("unchanged rounds ran Discover: %d calls in all, want 4", got)
	}
}

func TestLiveAddEditDeleteRediscoverOnlyWhoseInputsChanged(t *testing.T) {
	t.Parallel()
	m := testFS()
	m.WriteFile("/w/rules/a.md", []byte("a"))
	clock := settled(m)
	l := startLive(t, m, clock, testBuiltin("one", 50, ""), testBuiltin("lister", 40, "list"))

	m.WriteFile("/w/rules/b.md", []byte("b"))
	clock.set(m.Now().Add(time.Hour))
	ch := refresh(t, l)
	if !slices.Equal(ch.Discovered, []string{"lister"}) || len(ch.Rules.Added) != 1 || ch.Rules.Added[0].Name != "b.md" {
		t.Fatalf("add: %+v", ch)
	}
	if !strings.Contains(ch.Message, `New rule in the rulebook: "b.md": rule b.md.`) {
		t.Fatalf("add message = %q", ch.Message)
	}

	m.WriteFile("/w/rules/a.md", []byte("a, edited"))
	clock.set(m.Now().Add(time.Hour))
	ch = refresh(t, l)
	if !slices.Equal(ch.Discovered, []string{"lister"}) || len(ch.Rules.Changed) != 1 || ch.Rules.Changed[0].Content != "a, edited" {
		t.Fatalf("edit: %+v", ch)
	}

	m.Remove("/w/rules/b.md")
	clock.set(m.Now().Add(time.Hour))
	ch = refresh(t, l)
	if len(ch.Rules.Removed) != 1 || ch.Rules.Removed[0].Name != "b.md" || !strings.Contains(ch.Message, `Rule "b.md" no longer applies.`) {
		t.Fatalf("delete: %+v", ch)
	}

	// The file every test provider reads: both run again, and the winner's
	// copy changes.
	m.WriteFile("/w/rule.md", []byte("edited"))
	clock.set(m.Now().Add(time.Hour))
	ch = refresh(t, l)
	if !slices.Equal(ch.Discovered, []string{"one"}) || len(ch.Rules.Changed) != 1 {
		t.Fatalf("shared input: %+v", ch)
	}
	if got := l.Discovers(); got != 2+4 {
		t.Fatalf("Discover calls = %d, want 6", got)
	}
}

// A rewrite within the same timestamp tick keeps size, times and inode: only
// the racy-timestamp guard sees it.
func TestLiveRacyTimestamp(t *testing.T) {
	t.Parallel()
	m := testFS()
	m.WriteFile("/w/rules/a.md", []byte("v1"))
	clock := &fakeClock{t: m.Now()} // recorded in the same tick as the write
	l := startLive(t, m, clock, testBuiltin("lister", 40, "list"))

	info, err := m.Stat(context.Background(), "/w/rules/a.md")
	if err != nil {
		t.Fatal(err)
	}
	m.WriteFile("/w/rules/a.md", []byte("v2"))
	if err := m.SetTimes("/w/rules/a.md", info.ModTime, info.Ctime); err != nil {
		t.Fatal(err)
	}
	if after, _ := m.Stat(context.Background(), "/w/rules/a.md"); after.Size != info.Size || after.Ino != info.Ino {
		t.Fatal("the rewrite should keep size and inode")
	}
	ch := refresh(t, l)
	if len(ch.Rules.Changed) != 1 || ch.Rules.Changed[0].Content != "v2" {
		t.Fatalf("a rewrite in the same tick was missed: %+v", ch)
	}
	// Once the tick is long past, the facts are trusted again: no reads, no
	// Discover.
	clock.set(m.Now().Add(time.Hour))
	refresh(t, l) // re-verifies the racy facts and moves their time on
	m.ResetCounts()
	n := l.Discovers()
	refresh(t, l)
	if l.Discovers() != n || m.Counts().FilesRead+m.Counts().ReadDir != 0 {
		t.Fatalf("settled facts: %d discoveries, counts %+v", l.Discovers()-n, m.Counts())
	}
}

func TestLiveTouchedDirectoryJoinsTheSession(t *testing.T) {
	t.Parallel()
	m := testFS()
	m.Mkdir("/w/sub/deep")
	clock := settled(m)
	l := startLive(t, m, clock, testBuiltin("lister", 40, "list"))
	if ch := refresh(t, l, "sub/deep/x.go"); len(ch.Rules.Added) != 0 || !slices.Equal(ch.Discovered, []string{"lister"}) {
		t.Fatalf("a new directory runs the providers again: %+v", ch)
	}
	// The nested rules directory appears later: its absence was recorded.
	m.WriteFile("/w/sub/deep/rules/n.md", []byte("nested"))
	clock.set(m.Now().Add(time.Hour))
	ch := refresh(t, l)
	if len(ch.Rules.Added) != 1 || ch.Rules.Added[0].Path != "/w/sub/deep/rules/n.md" {
		t.Fatalf("nested rule: %+v", ch)
	}
	// A path outside cwd adds nothing.
	if ch := refresh(t, l, "/elsewhere/x.go", "../up.go"); len(ch.Discovered) != 0 {
		t.Fatalf("outside cwd: %+v", ch)
	}
}

func TestLiveCrashKeepsRulesAndRestartsWithBackoff(t *testing.T) {
	t.Parallel()
	m := testFS()
	clock := settled(m)
	l := startLive(t, m, clock, testBuiltin("one", 50, ""), testBuiltin("two", 40, ""))
	before := l.Rules()
	old := l.Result().Providers[0].PID
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Rounds until the host sees the exit; bounded.
	var ch Change
	for i := 0; i < 100 && len(ch.Warnings) == 0; i++ {
		time.Sleep(20 * time.Millisecond)
		ch = refresh(t, l)
	}
	if len(ch.Warnings) != 1 || ch.Warnings[0].Source != "one" || !strings.Contains(ch.Warnings[0].Message, "exited") ||
		!strings.Contains(ch.Warnings[0].Message, "restarting in 1s") {
		t.Fatalf("crash warnings = %v", ch.Warnings)
	}
	if !ch.Rules.Empty() || !slices.EqualFunc(l.Rules(), before, ruleset.SameRule) {
		t.Fatalf("a crash changed the rules: %+v", ch.Rules)
	}
	if p := l.Result().Providers[0]; p.PID != 0 || p.Crashes != 1 || p.Degraded {
		t.Fatalf("after the crash: %+v", p)
	}
	// Before the backoff has passed: no restart, no second warning.
	if ch := refresh(t, l); len(ch.Warnings) != 0 || len(ch.Restarted) != 0 {
		t.Fatalf("within the backoff: %+v", ch)
	}
	clock.set(clock.now().Add(time.Second))
	ch = refresh(t, l)
	if !slices.Equal(ch.Restarted, []string{"one"}) || len(ch.Warnings) != 0 || !ch.Rules.Empty() {
		t.Fatalf("restart round: %+v", ch)
	}
	if p := l.Result().Providers[0]; p.PID == 0 || p.PID == old {
		t.Fatalf("restarted pid = %d, was %d", p.PID, old)
	}
}

func TestLiveDegradedAfterRepeatedCrashes(t *testing.T) {
	t.Parallel()
	m := testFS()
	clock := settled(m)
	l := startLive(t, m, clock, testBuiltin("one", 50, ""))
	var last Change
	for crash := 1; crash <= 3; crash++ {
		pid := l.Result().Providers[0].PID
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		last = Change{}
		for i := 0; i < 100 && len(last.Warnings) == 0; i++ {
			time.Sleep(20 * time.Millisecond)
			last = refresh(t, l)
		}
		clock.set(clock.now().Add(time.Duration(1<<(crash-1)) * time.Second))
		if ch := refresh(t, l); !slices.Equal(ch.Restarted, []string{"one"}) {
			t.Fatalf("crash %d: no restart after the backoff: %+v", crash, ch)
		}
	}
	if !strings.Contains(last.Warnings[0].Message, "restarting in 4s") || !strings.Contains(last.Warnings[0].Message, "degraded") {
		t.Fatalf("third crash warning = %v", last.Warnings)
	}
	if p := l.Result().Providers[0]; !p.Degraded || p.Crashes != 3 {
		t.Fatalf("provider = %+v", p)
	}
}

func TestLiveAttachAnswersAfterEarlierSubscribers(t *testing.T) {
	t.Parallel()
	m := testFS()
	m.WriteFile("/w/rules/a.md", []byte("a"))
	clock := settled(m)
	l := startLive(t, m, clock, testBuiltin("lister", 40, "list"))
	var bus lifecycle.Bus
	bus.OnPostExecute("instructions", func(context.Context, lifecycle.PostExecute) (lifecycle.Answer, error) {
		return lifecycle.Answer{}, nil
	})
	sub := l.Attach(&bus)
	m.WriteFile("/w/rules/b.md", []byte("b"))
	clock.set(m.Now().Add(time.Hour))
	results := bus.PostExecute(context.Background(), lifecycle.PostExecute{Tool: "write", Paths: []string{"rules/b.md"}})
	ch, err := sub.From(results)
	if err != nil {
		t.Fatal(err)
	}
	if results[1].Hook != "rules" || len(results[1].Messages) != 1 || results[1].Messages[0].Text != ch.Message {
		t.Fatalf("results = %+v", results)
	}
	if got := l.Book().Available(); !slices.Equal(got, []string{"a.md", "b.md"}) {
		t.Fatalf("the book was not updated: %v", got)
	}
}

func TestLiveCloseIsFinal(t *testing.T) {
	t.Parallel()
	m := testFS()
	l := startLive(t, m, settled(m), testBuiltin("one", 50, ""))
	l.Close()
	l.Close()
	if _, err := l.Refresh(context.Background(), nil); err == nil {
		t.Fatal("Refresh after Close must fail")
	}
}

// withEnv is b with more environment for its process.
func withEnv(b Builtin, env ...string) Builtin {
	b.Env = append(append([]string(nil), b.Env...), env...)
	return b
}

// TestLiveRetriesAProviderThatFailedAtStart checks that a provider that fails
// to start, or to describe itself, when the session begins is started again
// with the crash backoff: one warning for the whole failure episode, degraded
// after repeated failures, and its rules join the session once it works.
func TestLiveRetriesAProviderThatFailedAtStart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, env, want string }{
		{"start", startMarkerEnv, "failed to start"},
		{"describe", describeMarkerEnv, "describe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "ready")
			m := testFS()
			clock := settled(m)
			l := startLive(t, m, clock, testBuiltin("steady", 40, ""), withEnv(testBuiltin("late", 50, ""), tc.env+"="+marker))
			skipped := func() []diag.Warning {
				var out []diag.Warning
				for _, w := range l.Result().Warnings {
					if strings.Contains(w.Message, "provider skipped") {
						out = append(out, w)
					}
				}
				return out
			}
			if w := skipped(); len(w) != 1 || w[0].Source != "built-in provider late" ||
				!strings.Contains(w[0].Message, tc.want) || !strings.Contains(w[0].Message, "trying again in 1s") {
				t.Fatalf("first round's warnings = %v", l.Result().Warnings)
			}
			if got := names(l.Rules()); !slices.Equal(got, []string{"steady:shared-name", "steady:steady-only"}) {
				t.Fatalf("rules = %v", got)
			}
			// Three more failures, each after its backoff: no warning in any
			// round, and the third in a row marks it degraded.
			for i, wait := range []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second} {
				clock.set(clock.now().Add(wait))
				ch := refresh(t, l)
				if len(ch.Warnings) != 0 || len(ch.Restarted) != 0 || !ch.Rules.Empty() {
					t.Fatalf("retry %d: %+v", i, ch)
				}
			}
			late := l.Result().Providers[1]
			if !late.Degraded || late.PID != 0 {
				t.Fatalf("after four failures in a row: %+v", late)
			}
			if w := skipped(); len(w) != 1 || !strings.Contains(w[0].Message, "trying again in 8s (failure 4 in a row); degraded") {
				t.Fatalf("warnings = %v", w)
			}
			// Within the backoff nothing is tried, even once it would work.
			if err := os.WriteFile(marker, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			clock.set(clock.now().Add(7 * time.Second))
			if ch := refresh(t, l); len(ch.Restarted) != 0 {
				t.Fatalf("started within the backoff: %+v", ch)
			}
			clock.set(clock.now().Add(time.Second))
			ch := refresh(t, l)
			if !slices.Equal(ch.Restarted, []string{"late"}) || !slices.Equal(ch.Discovered, []string{"late"}) || len(ch.Warnings) != 0 {
				t.Fatalf("the round it works: %+v", ch)
			}
			if got := names(l.Rules()); !slices.Equal(got, []string{"late:shared-name", "late:late-only", "steady:shared-name!", "steady:steady-only"}) {
				t.Fatalf("rules = %v", got)
			}
			if len(ch.Rules.Added) != 2 || len(ch.Rules.Shadowed) != 1 {
				t.Fatalf("its rules were not announced: %+v", ch)
			}
			if w := skipped(); len(w) != 0 {
				t.Fatalf("still reported skipped: %v", w)
			}
			if p := l.Result().Providers[1]; p.PID == 0 || p.Err != nil || p.Crashes != 0 {
				t.Fatalf("once started: %+v", p)
			}
			// A minute of running fine ends the row of failures.
			clock.set(clock.now().Add(time.Minute))
			refresh(t, l)
			if p := l.Result().Providers[1]; p.Degraded {
				t.Fatalf("still degraded after a minute up: %+v", p)
			}
		})
	}
}

// TestLiveKeepsOneHostFSConnectionPerProvider checks that a provider that
// re-discovers in its running process does so over the connection to the
// host's filesystem it opened for its first Discover: one per process for
// the session, not one per round.
func TestLiveKeepsOneHostFSConnectionPerProvider(t *testing.T) {
	t.Parallel()
	m := testFS()
	m.WriteFile("/w/rules/a.md", []byte("a"))
	clock := settled(m)
	l := startLive(t, m, clock, testBuiltin("lister", 40, "list"), testBuiltin("one", 50, ""))
	for i := range 5 {
		m.WriteFile("/w/rules/a.md", []byte(strings.Repeat("a", i+2)))
		clock.set(m.Now().Add(time.Hour))
		if ch := refresh(t, l, "sub/x.go"); len(ch.Rules.Changed) != 1 || len(ch.Discovered) == 0 {
			t.Fatalf("round %d: %+v", i, ch)
		}
	}
	if got := l.Discovers(); got < 2+5 {
		t.Fatalf("Discover calls = %d, want at least 7", got)
	}
	for _, p := range l.provs {
		if n := p.proc.client.HostFSConnections(); n != 1 {
			t.Errorf("%s opened %d connections to the host's filesystem, want 1", p.name(), n)
		}
	}
}
