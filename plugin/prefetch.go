package plugin

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"sync"

	"github.com/rulebroker/rulebroker/shared"
)

// prefetchFS answers HostFS calls from the answers the host sent with
// Discover (shared.DiscoverRequest.Prefetch) when it has the answer to
// exactly that call, and passes every other call to the host. The host took
// those answers at the start of this call, through the same policy and
// recording as a call of the provider's own, so using one is the same as
// asking; it only saves the round trip. An answer the host marked unchanged
// is the one this process got in its previous discovery, kept in memory.
type prefetchFS struct {
	shared.HostFS
	answers map[prefetchKey]*shared.Prefetched
	memory  *answerMemory // nil: nothing is kept
}

type prefetchKey struct {
	op   shared.PrefetchOp
	path string
	max  int64 // the read cap, for a file; 0 otherwise
}

func keyOf(a *shared.Prefetched) prefetchKey {
	k := prefetchKey{op: a.Op, path: a.Path}
	if a.Op == shared.PrefetchReadFile {
		k.max = a.MaxBytes
	}
	return k
}

// withPrefetch wraps fsys with the host's answers and the process's memory of
// its previous discovery, or returns fsys itself when it has neither. The
// first answer for a call wins.
func withPrefetch(fsys shared.HostFS, answers []shared.Prefetched, memory *answerMemory) shared.HostFS {
	if len(answers) == 0 && memory == nil {
		return fsys
	}
	p := &prefetchFS{HostFS: fsys, answers: make(map[prefetchKey]*shared.Prefetched, len(answers)), memory: memory}
	for i := range answers {
		a := &answers[i]
		if _, dup := p.answers[keyOf(a)]; !dup {
			p.answers[keyOf(a)] = a
		}
	}
	return p
}

// answer is the host's answer to the call, or nil when the provider must ask.
// The answer is kept for the next discovery.
func (p *prefetchFS) answer(op shared.PrefetchOp, path string, max int64) *shared.Prefetched {
	k := prefetchKey{op: op, path: path, max: max}
	a := p.answers[k]
	if a != nil && a.Unchanged {
		a = p.memory.recall(k)
	}
	if a != nil {
		p.memory.keep(*a)
	}
	return a
}

func (p *prefetchFS) Stat(ctx context.Context, path string) (shared.FileInfo, error) {
	if a := p.answer(shared.PrefetchStat, path, 0); a != nil {
		return a.Info, a.Err
	}
	fi, err := p.HostFS.Stat(ctx, path)
	p.memory.keep(shared.Prefetched{Op: shared.PrefetchStat, Path: path, Info: fi, Err: err})
	return fi, err
}

func (p *prefetchFS) Resolve(ctx context.Context, path string) (string, error) {
	if a := p.answer(shared.PrefetchResolve, path, 0); a != nil {
		return a.Resolved, a.Err
	}
	// Not kept: the host never vouches for a resolution as unchanged, since
	// a link on the way can change without the target's stat showing it.
	return p.HostFS.Resolve(ctx, path)
}

func (p *prefetchFS) ReadDir(ctx context.Context, path string) ([]shared.DirEntry, error) {
	if a := p.answer(shared.PrefetchReadDir, path, 0); a != nil {
		if a.Err != nil {
			return nil, a.Err
		}
		// A copy: the caller may sort or change what it gets.
		return append([]shared.DirEntry(nil), a.Entries...), nil
	}
	entries, err := p.HostFS.ReadDir(ctx, path)
	p.memory.keepCopy(shared.Prefetched{Op: shared.PrefetchReadDir, Path: path, Entries: entries, Err: err})
	return entries, err
}

func (p *prefetchFS) ReadFile(ctx context.Context, path string, max int64) ([]byte, error) {
	if a := p.answer(shared.PrefetchReadFile, path, max); a != nil {
		if a.Err != nil {
			return nil, a.Err
		}
		return append([]byte(nil), a.Data...), nil
	}
	data, err := p.HostFS.ReadFile(ctx, path, max)
	p.memory.keepCopy(shared.Prefetched{Op: shared.PrefetchReadFile, Path: path, MaxBytes: max, Data: data, Err: err})
	return data, err
}

// ReadFiles answers the files it has answers for and asks the host for the
// rest in one call, keeping the order of paths.
func (p *prefetchFS) ReadFiles(ctx context.Context, paths []string, max int64) ([]shared.FileContent, error) {
	out := make([]shared.FileContent, 0, len(paths))
	answered := make(map[string]*shared.Prefetched, len(paths))
	var ask []string
	for _, path := range paths {
		if a := p.answer(shared.PrefetchReadFile, path, max); a != nil {
			answered[path] = a
		} else {
			ask = append(ask, path)
		}
	}
	var asked map[string]shared.FileContent
	var err error
	if len(ask) > 0 {
		var files []shared.FileContent
		files, err = p.HostFS.ReadFiles(ctx, ask, max)
		asked = make(map[string]shared.FileContent, len(files))
		for _, f := range files {
			asked[f.Path] = f
			p.memory.keepCopy(shared.Prefetched{Op: shared.PrefetchReadFile, Path: f.Path, MaxBytes: max, Data: f.Data, Err: f.Err})
		}
	}
	for _, path := range paths {
		if a := answered[path]; a != nil {
			f := shared.FileContent{Path: path, Err: a.Err}
			if a.Err == nil {
				f.Data = append([]byte(nil), a.Data...)
			}
			out = append(out, f)
		} else if f, ok := asked[path]; ok {
			out = append(out, f)
		}
		// A file the host did not answer stays missing, as it would from
		// the host's own short answer: the caller reports it.
	}
	return out, err
}

// Caps on what a provider process keeps of its previous discovery: answers
// past them are not kept, and the host's "unchanged" for one of those makes
// the provider ask again.
const (
	maxKeptAnswers = 10_000
	maxKeptBytes   = 8 << 20
)

// answerMemory keeps, across the discoveries of one provider process, the
// HostFS answers of its latest discovery, which the host's "unchanged"
// answers stand for. Only answers about the filesystem are kept: content,
// listings, stats and the filesystem's own errors (absent, refused, not a
// directory, too large, permission); a failed call is asked again.
type answerMemory struct {
	mu         sync.Mutex
	last, next map[prefetchKey]*shared.Prefetched
	nextBytes  int
}

func newAnswerMemory() *answerMemory { return &answerMemory{} }

// begin starts recording a discovery's answers.
func (m *answerMemory) begin() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next, m.nextBytes = map[prefetchKey]*shared.Prefetched{}, 0
}

// end makes the discovery's answers the ones the next discovery recalls.
func (m *answerMemory) end() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last, m.next = m.next, nil
}

// recall returns the previous discovery's answer to the call, or nil.
func (m *answerMemory) recall(k prefetchKey) *shared.Prefetched {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last[k]
}

// keep records a, an answer the provider got in this discovery, which
// nothing changes any more (a prefetched answer: the provider gets copies).
func (m *answerMemory) keep(a shared.Prefetched) { m.store(a, false) }

// keepCopy records a copy of a, an answer whose slices go on to the
// provider, which may change them.
func (m *answerMemory) keepCopy(a shared.Prefetched) { m.store(a, true) }

func (m *answerMemory) store(a shared.Prefetched, copy bool) {
	if m == nil || !fsAnswer(a.Err) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := keyOf(&a)
	size := len(a.Data) + len(a.Path)
	for _, e := range a.Entries {
		size += len(e.Name) + 8
	}
	if m.next == nil || m.next[k] != nil || len(m.next) >= maxKeptAnswers || m.nextBytes+size > maxKeptBytes {
		return
	}
	if copy {
		a.Data, a.Entries = slices.Clone(a.Data), slices.Clone(a.Entries)
	}
	a.Unchanged = false
	m.next[k] = &a
	m.nextBytes += size
}

// fsAnswer reports an error that is the filesystem's answer, as opposed to
// a failure to get one.
func fsAnswer(err error) bool {
	return err == nil || IsAbsent(err) || errors.Is(err, fs.ErrPermission) || errors.Is(err, shared.ErrTooLarge)
}
