package broker

import (
	"context"

	"github.com/rulebroker/rulebroker/internal/wire"
	"github.com/rulebroker/rulebroker/shared"
)

// Prefetch caps: what the host answers ahead of one Discover. A provider
// whose earlier calls exceed them gets answers for the calls that fit, in the
// order it first made them, and asks the host for the rest as usual.
const (
	// maxPrefetch caps the answers plus the directory entries in them.
	maxPrefetch = 10_000
	// maxPrefetchBytes caps the file bytes in them; the request that
	// carries them must stay inside the plugin's receive limit.
	maxPrefetchBytes = wire.PrefetchBytes
)

// prefetch answers, now, the HostFS calls a provider made in its previous
// discovery (calls), so that its re-discovery needs no round trip for them.
// Every answer is asked of fsys — the recording filesystem of the coming
// Discover — so the host's policy applies to it, and it is recorded as an
// input of this discovery exactly as the provider's own call would be: a
// change to it later is noticed. The answers are fresh, never the recorded
// ones. Errors are answers too (a file that is still missing).
//
// same, when not nil, returns the previous discovery's fact for a call whose
// path this round found unchanged: that call is answered "unchanged" — the
// provider reuses the answer it got last time — and the fact carries over,
// so a re-discovery after one edit reads the edited file alone.
func prefetch(ctx context.Context, fsys *recordingFS, calls []shared.Prefetched, same func(shared.Prefetched) *fact) []shared.Prefetched {
	out := make([]shared.Prefetched, 0, min(len(calls), maxPrefetch))
	items, bytes := 0, int64(0)
	for _, c := range calls {
		if ctx.Err() != nil || items >= maxPrefetch || bytes >= maxPrefetchBytes {
			break
		}
		a := shared.Prefetched{Op: c.Op, Path: c.Path, MaxBytes: c.MaxBytes}
		if f := sameFact(same, c); f != nil {
			fsys.reuse(c, f)
			a.Unchanged = true
			items++
			out = append(out, a)
			continue
		}
		switch c.Op {
		case shared.PrefetchStat:
			a.Info, a.Err = fsys.Stat(ctx, c.Path)
		case shared.PrefetchResolve:
			a.Resolved, a.Err = fsys.Resolve(ctx, c.Path)
		case shared.PrefetchReadDir:
			a.Entries, a.Err = fsys.ReadDir(ctx, c.Path)
			items += len(a.Entries)
		case shared.PrefetchReadFile:
			a.Data, a.Err = fsys.ReadFile(ctx, c.Path, c.MaxBytes)
			bytes += int64(len(a.Data))
		default:
			continue
		}
		items++
		if ctx.Err() != nil || items > maxPrefetch || bytes > maxPrefetchBytes {
			// An answer cut short by the deadline is no answer, and one
			// past a cap is not sent: the provider asks for it.
			break
		}
		out = append(out, a)
	}
	return out
}

func sameFact(same func(shared.Prefetched) *fact, c shared.Prefetched) *fact {
	if same == nil {
		return nil
	}
	return same(c)
}
