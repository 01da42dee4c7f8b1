package plugin

import (
	"context"

	"github.com/rulebroker/rulebroker/shared"
)

// prefetchFS answers HostFS calls from the answers the host sent with
// Discover (shared.DiscoverRequest.Prefetch) when it has the answer to
// exactly that call, and passes every other call to the host. The host took
// those answers at the start of this call, through the same policy and
// recording as a call of the provider's own, so using one is the same as
// asking; it only saves the round trip.
type prefetchFS struct {
	shared.HostFS
	answers map[prefetchKey]*shared.Prefetched
}

type prefetchKey struct {
	op   shared.PrefetchOp
	path string
	max  int64 // the read cap, for a file; 0 otherwise
}

// withPrefetch wraps fsys with the host's answers, or returns fsys itself
// when there are none. The first answer for a call wins.
func withPrefetch(fsys shared.HostFS, answers []shared.Prefetched) shared.HostFS {
	if len(answers) == 0 {
		return fsys
	}
	p := &prefetchFS{HostFS: fsys, answers: make(map[prefetchKey]*shared.Prefetched, len(answers))}
	for i := range answers {
		a := &answers[i]
		k := prefetchKey{op: a.Op, path: a.Path}
		if a.Op == shared.PrefetchReadFile {
			k.max = a.MaxBytes
		}
		if _, dup := p.answers[k]; !dup {
			p.answers[k] = a
		}
	}
	return p
}

func (p *prefetchFS) answer(op shared.PrefetchOp, path string, max int64) *shared.Prefetched {
	return p.answers[prefetchKey{op: op, path: path, max: max}]
}

func (p *prefetchFS) Stat(ctx context.Context, path string) (shared.FileInfo, error) {
	if a := p.answer(shared.PrefetchStat, path, 0); a != nil {
		return a.Info, a.Err
	}
	return p.HostFS.Stat(ctx, path)
}

func (p *prefetchFS) Resolve(ctx context.Context, path string) (string, error) {
	if a := p.answer(shared.PrefetchResolve, path, 0); a != nil {
		return a.Resolved, a.Err
	}
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
	return p.HostFS.ReadDir(ctx, path)
}

func (p *prefetchFS) ReadFile(ctx context.Context, path string, max int64) ([]byte, error) {
	if a := p.answer(shared.PrefetchReadFile, path, max); a != nil {
		if a.Err != nil {
			return nil, a.Err
		}
		return append([]byte(nil), a.Data...), nil
	}
	return p.HostFS.ReadFile(ctx, path, max)
}

// ReadFiles answers the files it has answers for and asks the host for the
// rest in one call, keeping the order of paths.
func (p *prefetchFS) ReadFiles(ctx context.Context, paths []string, max int64) ([]shared.FileContent, error) {
	out := make([]shared.FileContent, 0, len(paths))
	var ask []string
	for _, path := range paths {
		if p.answer(shared.PrefetchReadFile, path, max) == nil {
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
		}
	}
	for _, path := range paths {
		if a := p.answer(shared.PrefetchReadFile, path, max); a != nil {
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
