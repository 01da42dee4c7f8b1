package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/rulebroker/rulebroker/host-sdk/diag"
	"github.com/rulebroker/rulebroker/shared"
)

// recordingFS remembers every path a provider asked the host about, so the
// host can later tell whether the provider's inputs changed, and which of
// them the host's filesystem policy refused, so the host hears about that
// once instead of through a warning per file.
//
// It is also where the host leaves out what cannot cross the wire: a
// directory entry whose name is not valid UTF-8 (gRPC strings must be) is
// skipped with a warning naming the directory and the escaped name, and its
// siblings are listed as usual.
type recordingFS struct {
	shared.HostFS
	mu      sync.Mutex
	paths   map[string]bool
	refused map[string]bool
	skipped []diag.Warning // entries left out, at most maxSkipWarnings
	dropped int            // skipped entries beyond those
	// facts, when set, records what a live broker re-checks after each tool
	// call: the stat of every path (taken before the provider's own call),
	// and digests of what was read and listed.
	facts *factRecorder
	// asked lists the calls made, each once, in the order first made, up
	// to maxPrefetch: the calls a live broker answers ahead of the next
	// Discover (see prefetch).
	asked    []shared.Prefetched
	askedSet map[prefetchKey]bool
}

type prefetchKey struct {
	op   shared.PrefetchOp
	path string
	max  int64
}

// maxSkipWarnings bounds the warnings about skipped entries one provider
// gets; the rest are counted in one more.
const maxSkipWarnings = 100

func newRecordingFS(inner shared.HostFS) *recordingFS {
	return &recordingFS{HostFS: inner, paths: map[string]bool{}, refused: map[string]bool{}, askedSet: map[prefetchKey]bool{}}
}

// ask records a call for the next prefetch.
func (r *recordingFS) ask(op shared.PrefetchOp, path string, max int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Only a live broker prefetches, and only it records facts: a one-shot
	// Load has no next Discover to answer for.
	if r.facts == nil {
		return
	}
	k := prefetchKey{op: op, path: path, max: max}
	if r.askedSet[k] || len(r.asked) >= maxPrefetch {
		return
	}
	r.askedSet[k] = true
	r.asked = append(r.asked, shared.Prefetched{Op: op, Path: path, MaxBytes: max})
}

// calls returns the calls made, in the order first made, and forgets
// them: the caller owns the list.
func (r *recordingFS) calls() []shared.Prefetched {
	r.mu.Lock()
	defer r.mu.Unlock()
	asked := r.asked
	r.asked = nil
	return asked
}

// expect makes room for n calls, the number the previous discovery made:
// a re-discovery usually makes the same ones.
func (r *recordingFS) expect(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n = min(n, maxPrefetch)
	r.asked = slices.Grow(r.asked, n)
	if len(r.askedSet) == 0 {
		r.askedSet = make(map[prefetchKey]bool, n)
	}
}

// reuse records call as made and answered "unchanged" from f, the previous
// discovery's fact of its path, which carries over.
func (r *recordingFS) reuse(call shared.Prefetched, f *fact) {
	r.facts.adopt(f)
	var err error
	if f.stat.errClass == "refused" {
		err = shared.ErrRefused
	}
	r.note(err, call.Path)
	r.ask(call.Op, call.Path, call.MaxBytes)
}

func (r *recordingFS) note(err error, paths ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range paths {
		r.paths[p] = true
		if errors.Is(err, shared.ErrRefused) {
			r.refused[p] = true
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// read returns every path asked about and the refused ones, sorted.
func (r *recordingFS) read() (paths, refused []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return sortedKeys(r.paths), sortedKeys(r.refused)
}

func (r *recordingFS) Stat(ctx context.Context, path string) (shared.FileInfo, error) {
	r.facts.observe(ctx, path)
	fi, err := r.HostFS.Stat(ctx, path)
	r.note(err, path)
	r.ask(shared.PrefetchStat, path, 0)
	return fi, err
}

func (r *recordingFS) Resolve(ctx context.Context, path string) (string, error) {
	r.facts.observe(ctx, path)
	p, err := r.HostFS.Resolve(ctx, path)
	r.note(err, path)
	r.ask(shared.PrefetchResolve, path, 0)
	return p, err
}

func (r *recordingFS) ReadDir(ctx context.Context, path string) ([]shared.DirEntry, error) {
	r.facts.observe(ctx, path)
	entries, err := r.HostFS.ReadDir(ctx, path)
	r.facts.list(path, entries, err)
	r.note(err, path)
	r.ask(shared.PrefetchReadDir, path, 0)
	invalid := func(e shared.DirEntry) bool { return !utf8.ValidString(e.Name) }
	if err != nil || !slices.ContainsFunc(entries, invalid) {
		return entries, err
	}
	valid := make([]shared.DirEntry, 0, len(entries))
	for _, e := range entries {
		if invalid(e) {
			r.skip(path, e.Name)
			continue
		}
		valid = append(valid, e)
	}
	return valid, nil
}

func (r *recordingFS) skip(dir, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.skipped) >= maxSkipWarnings {
		r.dropped++
		return
	}
	r.skipped = append(r.skipped, diag.Warning{Path: dir, Message: fmt.Sprintf(
		"entry %s skipped: its name is not valid UTF-8, which the provider protocol cannot carry; rename it to load it", strconv.Quote(name))})
}

// warnings returns the warnings about what the host left out, from source.
func (r *recordingFS) warnings(source string) []diag.Warning {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]diag.Warning, 0, len(r.skipped)+1)
	for _, w := range r.skipped {
		w.Source = source
		out = append(out, w)
	}
	if r.dropped > 0 {
		out = append(out, diag.Warning{Source: source, Message: fmt.Sprintf(
			"%d more directory entries skipped because their names are not valid UTF-8", r.dropped)})
	}
	return out
}

func (r *recordingFS) ReadFile(ctx context.Context, path string, max int64) ([]byte, error) {
	r.facts.observe(ctx, path)
	data, err := r.HostFS.ReadFile(ctx, path, max)
	r.facts.read(path, data, err, max)
	r.note(err, path)
	r.ask(shared.PrefetchReadFile, path, max)
	return data, err
}

func (r *recordingFS) ReadFiles(ctx context.Context, paths []string, max int64) ([]shared.FileContent, error) {
	for _, p := range paths {
		r.facts.observe(ctx, p)
	}
	files, err := r.HostFS.ReadFiles(ctx, paths, max)
	r.note(err, paths...)
	for _, f := range files {
		r.facts.read(f.Path, f.Data, f.Err, max)
		r.note(f.Err, f.Path)
		r.ask(shared.PrefetchReadFile, f.Path, max)
	}
	return files, err
}
