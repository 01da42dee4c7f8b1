package broker

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/rulebroker/rulebroker/host-sdk/workfs"
	"github.com/rulebroker/rulebroker/shared"
)

// callLog wraps a HostFS and records the calls of one side: with provider
// set, those a provider made over the wire (a gRPC handler's context names
// its method); without, the host's own (its fact checks and the prefetch).
// Stats are left out: the host's fact recorder stats each path a provider
// asks about, with the call's context, before the call, and the SDK
// provider these tests run makes no Stat calls of its own.
type callLog struct {
	shared.HostFS
	provider bool
	mu       sync.Mutex
	calls    []string
}

func (c *callLog) note(ctx context.Context, op string, paths ...string) {
	if _, overWire := grpc.Method(ctx); overWire != c.provider {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range paths {
		c.calls = append(c.calls, op+" "+p)
	}
}

func (c *callLog) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = nil
	return out
}

func (c *callLog) Resolve(ctx context.Context, p string) (string, error) {
	c.note(ctx, "resolve", p)
	return c.HostFS.Resolve(ctx, p)
}

func (c *callLog) ReadDir(ctx context.Context, p string) ([]shared.DirEntry, error) {
	c.note(ctx, "readdir", p)
	return c.HostFS.ReadDir(ctx, p)
}

func (c *callLog) ReadFile(ctx context.Context, p string, max int64) ([]byte, error) {
	c.note(ctx, "read", p)
	return c.HostFS.ReadFile(ctx, p, max)
}

func (c *callLog) ReadFiles(ctx context.Context, paths []string, max int64) ([]shared.FileContent, error) {
	c.note(ctx, "read", paths...)
	return c.HostFS.ReadFiles(ctx, paths, max)
}

func TestLivePrefetchAnswersUnchangedCallsWithoutARoundTrip(t *testing.T) {
	t.Parallel()
	m := testFS()
	m.WriteFile("/w/d/a.md", []byte("a"))
	m.WriteFile("/w/d/b.md", []byte("b"))
	clock := settled(m)
	calls := &callLog{HostFS: m, provider: true}
	l, err := Start(context.Background(), Options{Builtins: []Builtin{sdkBuiltin("sdk")}, FS: calls, Timeout: 10 * time.Second},
		shared.DiscoverRequest{Cwd: "/w"}, WithClock(clock.now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	if got := calls.take(); !slices.Equal(got, []string{"readdir /w/d", "read /w/d/a.md", "read /w/d/b.md"}) {
		t.Fatalf("first discovery asked %q", got)
	}
	content := func(name string) string {
		for _, r := range l.Rules() {
			if r.Name == name {
				return r.Content
			}
		}
		return ""
	}

	// An edit: the provider runs again and gets every answer, the edited
	// file's fresh bytes included, with Discover.
	m.WriteFile("/w/d/a.md", []byte("a, edited"))
	clock.set(m.Now().Add(time.Hour))
	if ch := refresh(t, l); len(ch.Discovered) != 1 || content("a") != "a, edited" {
		t.Fatalf("edit: %+v", ch)
	}
	if got := calls.take(); len(got) != 0 {
		t.Fatalf("a re-discovery with every answer prefetched still called the host: %q", got)
	}

	// The prefetched round recorded its inputs: the next edit is noticed.
	m.WriteFile("/w/d/b.md", []byte("b, edited"))
	clock.set(m.Now().Add(time.Hour))
	if ch := refresh(t, l); len(ch.Discovered) != 1 || content("b") != "b, edited" {
		t.Fatalf("edit after a prefetched round: %+v", ch)
	}
	if ch := refresh(t, l); len(ch.Discovered) != 0 {
		t.Fatalf("nothing changed after a prefetched round, yet %+v", ch)
	}

	// A new file was never asked about, so it is not prefetched: the
	// provider asks the host for it, and for nothing else.
	m.WriteFile("/w/d/c.md", []byte("c"))
	clock.set(m.Now().Add(time.Hour))
	if ch := refresh(t, l); len(ch.Discovered) != 1 || content("c") != "c" {
		t.Fatalf("add: %+v", ch)
	}
	if got := calls.take(); !slices.Equal(got, []string{"read /w/d/c.md"}) {
		t.Fatalf("with a new file the provider asked %q, want only the new file", got)
	}

	// A deleted file's prefetched answer is its error, as the host's own.
	m.Remove("/w/d/a.md")
	clock.set(m.Now().Add(time.Hour))
	if ch := refresh(t, l); len(ch.Rules.Removed) != 1 || ch.Rules.Removed[0].Name != "a" {
		t.Fatalf("delete: %+v", ch)
	}
	if got := calls.take(); len(got) != 0 {
		t.Fatalf("after a delete the provider called the host: %q", got)
	}
}

func TestPrefetchStaysInsideItsCaps(t *testing.T) {
	t.Parallel()
	m := testFS()
	big := strings.Repeat("x", maxPrefetchBytes/2+1)
	m.WriteFile("/w/1", []byte(big))
	m.WriteFile("/w/2", []byte(big))
	m.WriteFile("/w/3", []byte("small"))
	fsys := newRecordingFS(m)
	calls := []shared.Prefetched{
		{Op: shared.PrefetchReadFile, Path: "/w/1", MaxBytes: 1 << 30},
		{Op: shared.PrefetchReadFile, Path: "/w/2", MaxBytes: 1 << 30},
		{Op: shared.PrefetchReadFile, Path: "/w/3", MaxBytes: 1 << 30},
	}
	got := prefetch(context.Background(), fsys, calls, nil)
	if len(got) != 1 || got[0].Path != "/w/1" || string(got[0].Data) != big {
		t.Fatalf("over the byte cap: %d answers", len(got))
	}
	var many []shared.Prefetched
	for range maxPrefetch + 5 {
		many = append(many, shared.Prefetched{Op: shared.PrefetchStat, Path: "/w/rule.md"})
	}
	if got := prefetch(context.Background(), newRecordingFS(m), many, nil); len(got) != maxPrefetch {
		t.Fatalf("over the count cap: %d answers, want %d", len(got), maxPrefetch)
	}
}

// The built-in cursor provider, a real process, on the demo workspace: the
// round that notices an edited rule file makes no HostFS call at all.
func TestLivePrefetchRealProviderEditedRoundMakesNoHostFSCall(t *testing.T) {
	t.Parallel()
	demo := t.TempDir()
	copyTree(t, "../../examples/demo", demo)
	ws := filepath.Join(demo, "workspace")
	calls := &callLog{HostFS: workfs.OS{}, provider: true}
	l, err := Start(context.Background(), Options{Builtins: realBuiltins(), FS: calls, Timeout: time.Minute},
		shared.DiscoverRequest{Cwd: ws, Home: filepath.Join(demo, "home"), WorkspaceRoot: ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	if got := calls.take(); len(got) == 0 {
		t.Fatal("the first discovery made no HostFS call: the count does not work")
	}
	edit := filepath.Join(ws, ".cursor/rules/testing.mdc")
	orig, err := os.ReadFile(edit)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		os.WriteFile(edit, append(orig, strings.Repeat("\nedited", i+1)...), 0o644)
		ch := refresh(t, l)
		if !slices.Equal(ch.Discovered, []string{"cursor"}) || len(ch.Rules.Changed) != 1 {
			t.Fatalf("edit %d: %+v", i, ch)
		}
		if got := calls.take(); len(got) != 0 {
			t.Fatalf("edit %d: the provider called the host: %q", i, got)
		}
	}
}

func TestLiveEditedRoundReadsOnlyWhatChanged(t *testing.T) {
	m := testFS()
	m.WriteFile("/w/d/a.md", []byte("a"))
	m.WriteFile("/w/d/b.md", []byte("b"))
	m.WriteFile("/w/d/c.md", []byte("c"))
	clock := settled(m)
	host := &callLog{HostFS: m}
	l := startLive(t, host, clock, sdkBuiltin("sdk"))
	contents := func() string {
		var out []string
		for _, r := range l.Rules() {
			out = append(out, r.Name+"="+r.Content)
		}
		return strings.Join(out, " ")
	}
	host.take()

	// The edited file is read again; its unchanged siblings and their
	// unchanged folder are answered "unchanged", and the provider still has
	// every rule with its content.
	m.WriteFile("/w/d/b.md", []byte("b, edited"))
	clock.set(m.Now().Add(time.Hour))
	if ch := refresh(t, l); len(ch.Discovered) != 1 || len(ch.Rules.Changed) != 1 {
		t.Fatalf("edit: %+v", ch)
	}
	if got := host.take(); !slices.Equal(got, []string{"read /w/d/b.md"}) {
		t.Fatalf("the edited round read %q, want only the edited file", got)
	}
	if got := contents(); got != "a=a b=b, edited c=c" {
		t.Fatalf("rules after the edit: %s", got)
	}

	// The carried-over facts are still checked: a later edit of a file
	// answered "unchanged" is noticed, and so is one to the folder.
	m.WriteFile("/w/d/a.md", []byte("a, edited"))
	clock.set(m.Now().Add(time.Hour))
	if ch := refresh(t, l); len(ch.Discovered) != 1 {
		t.Fatalf("edit of a carried-over file: %+v", ch)
	}
	m.WriteFile("/w/d/e.md", []byte("e"))
	clock.set(m.Now().Add(time.Hour))
	refresh(t, l)
	if got := contents(); got != "a=a, edited b=b, edited c=c e=e" {
		t.Fatalf("rules after more edits: %s", got)
	}
	if ch := refresh(t, l); len(ch.Discovered) != 0 {
		t.Fatalf("nothing changed, yet %+v", ch)
	}
}

// A provider that does not say it keeps its answers (one built before the
// capability existed) gets every answer in full: the host reads every file
// again rather than send an "unchanged" it would misread.
func TestLiveSendsUnchangedOnlyToProvidersThatSayTheyKeepAnswers(t *testing.T) {
	m := testFS()
	m.WriteFile("/w/d/a.md", []byte("a"))
	m.WriteFile("/w/d/b.md", []byte("b"))
	clock := settled(m)
	host := &callLog{HostFS: m}
	l := startLive(t, host, clock, sdkBuiltin("sdk"))
	if !l.provs[0].proc.unchangedAnswers {
		t.Fatal("the SDK provider does not say it keeps its answers")
	}
	l.provs[0].proc.unchangedAnswers = false
	host.take()
	m.WriteFile("/w/d/b.md", []byte("b, edited"))
	clock.set(m.Now().Add(time.Hour))
	if ch := refresh(t, l); len(ch.Rules.Changed) != 1 {
		t.Fatalf("edit: %+v", ch)
	}
	if got, want := host.take(), []string{"readdir /w/d", "read /w/d/a.md", "read /w/d/b.md"}; !slices.Equal(got, want) {
		t.Fatalf("the host read %q, want every answer in full: %q", got, want)
	}
}
