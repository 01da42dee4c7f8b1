package plugin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rulebroker/rulebroker/shared"
)

// countingHostFS records every call the provider makes to the host.
type countingHostFS struct {
	shared.HostFS
	mu    sync.Mutex
	calls []string
}

func (c *countingHostFS) note(op string, paths ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range paths {
		c.calls = append(c.calls, op+" "+p)
	}
}

func (c *countingHostFS) Stat(ctx context.Context, p string) (shared.FileInfo, error) {
	c.note("stat", p)
	return c.HostFS.Stat(ctx, p)
}

func (c *countingHostFS) ReadDir(ctx context.Context, p string) ([]shared.DirEntry, error) {
	c.note("readdir", p)
	return c.HostFS.ReadDir(ctx, p)
}

func (c *countingHostFS) ReadFile(ctx context.Context, p string, max int64) ([]byte, error) {
	c.note("read", p)
	return c.HostFS.ReadFile(ctx, p, max)
}

func (c *countingHostFS) ReadFiles(ctx context.Context, paths []string, max int64) ([]shared.FileContent, error) {
	c.note("read", paths...)
	return c.HostFS.ReadFiles(ctx, paths, max)
}

// dirAndStat loads every .md file in <cwd>/d and reports whether
// <cwd>/.marker exists, as a warning.
type dirAndStat struct{}

func (dirAndStat) Info() Info { return Info{Name: "dir", Version: "1", Priority: 1} }
func (dirAndStat) Discover(_ context.Context, req Request) (Result, error) {
	rules, warnings := LoadRules(req.FS, path.Join(req.Cwd, "d"), LevelProject, ".md")
	_, err := fs.Stat(req.FS, path.Join(req.Cwd, ".marker"))
	warnings = append(warnings, Warning{Message: fmt.Sprintf("marker absent: %v", errors.Is(err, fs.ErrNotExist))})
	return Result{Rules: rules, Warnings: warnings}, nil
}

func TestPrefetchedAnswersAreUsedAndTheHostIsNotCalled(t *testing.T) {
	prov := dispense(t, dirAndStat{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	host := &countingHostFS{HostFS: &mapHostFS{files: map[string]string{
		"/w/d/a.md":  "a on the host",
		"/w/d/b.md":  "b on the host",
		"/w/.marker": "",
	}}}
	// The answers differ from the host's files, so a rule shows where its
	// content came from.
	req := shared.DiscoverRequest{Cwd: "/w", Prefetch: []shared.Prefetched{
		{Op: shared.PrefetchReadDir, Path: "/w/d", Entries: []shared.DirEntry{{Name: "a.md"}, {Name: "b.md"}}},
		{Op: shared.PrefetchReadFile, Path: "/w/d/a.md", MaxBytes: shared.DefaultMaxRuleBytes, Data: []byte("a prefetched")},
		// Another cap than the provider reads with: not its answer.
		{Op: shared.PrefetchReadFile, Path: "/w/d/b.md", MaxBytes: 1, Data: []byte("b prefetched")},
		{Op: shared.PrefetchStat, Path: "/w/.marker", Err: fmt.Errorf("stat /w/.marker: %w", fs.ErrNotExist)},
		// Answers the provider never asks for cost nothing.
		{Op: shared.PrefetchReadFile, Path: "/w/other.md", MaxBytes: shared.DefaultMaxRuleBytes, Data: []byte("x")},
	}}
	var got sink
	if err := prov.Discover(ctx, req, host, &got); err != nil {
		t.Fatal(err)
	}
	contents := map[string]string{}
	for _, r := range got.rules {
		contents[r.Name] = r.Content
	}
	if contents["a"] != "a prefetched" || contents["b"] != "b on the host" || len(got.rules) != 2 {
		t.Fatalf("rules = %+v", got.rules)
	}
	if len(got.warnings) != 1 || got.warnings[0].Message != "marker absent: true" {
		t.Fatalf("a prefetched error must answer errors.Is like the host's own: %+v", got.warnings)
	}
	if !slices.Equal(host.calls, []string{"read /w/d/b.md"}) {
		t.Fatalf("host calls = %q, want only the file without a usable answer", host.calls)
	}

	// Without a prefetch every call goes to the host.
	host.calls = nil
	got = sink{}
	if err := prov.Discover(ctx, shared.DiscoverRequest{Cwd: "/w"}, host, &got); err != nil {
		t.Fatal(err)
	}
	if want := []string{"readdir /w/d", "read /w/d/a.md", "read /w/d/b.md", "stat /w/.marker"}; !slices.Equal(host.calls, want) {
		t.Fatalf("host calls = %q, want %q", host.calls, want)
	}
}

func TestRediscoveryParsesOnlyTheFilesThatChanged(t *testing.T) {
	a := newAdapter(dirAndStat{})
	ctx := context.Background()
	host := &mapHostFS{files: map[string]string{
		"/w/d/a.md": "---\ndescription: a\n---\na body",
		"/w/d/b.md": "---\ndescription: b\n---\nb body",
	}}
	discover := func() map[string]string {
		t.Helper()
		var got sink
		if err := a.Discover(ctx, shared.DiscoverRequest{Cwd: "/w"}, host, &got); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, r := range got.rules {
			out[r.Name] = r.Description + ": " + r.Content
		}
		return out
	}
	discover()
	host.files["/w/d/b.md"] = "---\ndescription: b2\n---\nb edited"
	got := discover()
	if got["a"] != "a: a body" || got["b"] != "b2: b edited" {
		t.Fatalf("rules after the edit = %q", got)
	}
	if parsed, remembered := a.parsed.Stats(); parsed != 3 || remembered != 1 {
		t.Fatalf("two discoveries parsed %d files and remembered %d; want 3 (both, then the edited one) and 1", parsed, remembered)
	}
}

func TestUnchangedAnswersComeFromThePreviousDiscovery(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{"/w/d/a.md": "a", "/w/d/b.md": "b"}
	host := &countingHostFS{HostFS: &mapHostFS{files: files}}
	unchanged := []shared.Prefetched{
		{Op: shared.PrefetchReadDir, Path: "/w/d", Unchanged: true},
		{Op: shared.PrefetchReadFile, Path: "/w/d/a.md", MaxBytes: shared.DefaultMaxRuleBytes, Unchanged: true},
		{Op: shared.PrefetchStat, Path: "/w/.marker", Unchanged: true},
	}
	discover := func(a adapter, prefetch []shared.Prefetched) string {
		t.Helper()
		var got sink
		if err := a.Discover(ctx, shared.DiscoverRequest{Cwd: "/w", Prefetch: prefetch}, host, &got); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range got.rules {
			out = append(out, r.Name+"="+r.Content)
		}
		for _, w := range got.warnings {
			out = append(out, w.Message)
		}
		return strings.Join(out, " ")
	}

	a := newAdapter(dirAndStat{})
	discover(a, nil)
	host.calls = nil
	// The host vouches for a.md, the folder and the absent marker; b.md
	// changed and comes fresh. The provider's own copy of a.md is used —
	// the host's bytes differ here only to show which one was — and the
	// host is not asked.
	files["/w/d/a.md"] = "a on the host"
	fresh := append(unchanged, shared.Prefetched{Op: shared.PrefetchReadFile, Path: "/w/d/b.md", MaxBytes: shared.DefaultMaxRuleBytes, Data: []byte("b, edited")})
	if got := discover(a, fresh); got != "a=a b=b, edited marker absent: true" {
		t.Fatalf("rules and warnings: %s", got)
	}
	if len(host.calls) != 0 {
		t.Fatalf("the host was asked %q", host.calls)
	}

	// A process that does not have the previous answers (a new one) asks
	// the host for each call the host called unchanged.
	host.calls = nil
	if got := discover(newAdapter(dirAndStat{}), unchanged); got != "a=a on the host b=b marker absent: true" {
		t.Fatalf("rules and warnings without the previous answers: %s", got)
	}
	if want := []string{"readdir /w/d", "read /w/d/a.md", "read /w/d/b.md", "stat /w/.marker"}; !slices.Equal(host.calls, want) {
		t.Fatalf("host calls = %q, want %q", host.calls, want)
	}
}
