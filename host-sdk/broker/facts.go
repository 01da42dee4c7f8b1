package broker

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"sync"
	"time"

	"github.com/rulebroker/rulebroker/shared"
)

// racyWindow is the racy-timestamp margin, the same one the instruction
// reconciler uses: filesystem timestamps can lag the process clock by a
// coarse tick, so a file or directory whose mtime is not older than (when it
// was recorded - racyWindow) may have changed after it was read without its
// stat facts changing. Such a fact is re-read on the next check instead of
// being trusted.
const racyWindow = 2 * time.Second

// maxFacts caps the paths recorded for one provider's discovery. A provider
// that asks about more is always re-discovered after a tool call (its inputs
// cannot be checked cheaply), and a warning names the cap.
const maxFacts = 100_000

// factKind says what a provider did with a path.
type factKind uint8

const (
	factRead factKind = 1 << iota // read its content
	factList                      // listed it as a directory
)

// statFact is the outcome of the host's Stat of a path: the facts that
// reveal a change (size, mode, mtime, ctime, device, inode), or the class of
// the error.
type statFact struct {
	errClass     string // "" when the stat worked
	size         int64
	mode         fs.FileMode
	mtime, ctime time.Time
	dev, ino     uint64
}

func statOf(ctx context.Context, fsys shared.HostFS, path string) statFact {
	fi, err := fsys.Stat(ctx, path)
	if err != nil {
		return statFact{errClass: errClass(err)}
	}
	return statFact{size: fi.Size, mode: fi.Mode, mtime: fi.ModTime, ctime: fi.Ctime, dev: fi.Dev, ino: fi.Ino}
}

func (a statFact) equal(b statFact) bool {
	return a.errClass == b.errClass && a.size == b.size && a.mode == b.mode &&
		a.mtime.Equal(b.mtime) && a.ctime.Equal(b.ctime) && a.dev == b.dev && a.ino == b.ino
}

// errClass groups errors by what they mean to a provider, so an error that
// recurs with different wording is not a change.
func errClass(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, shared.ErrRefused):
		return "refused"
	case errors.Is(err, fs.ErrNotExist):
		return "absent"
	case errors.Is(err, shared.ErrNotDir):
		return "notdir"
	case errors.Is(err, shared.ErrTooLarge):
		return "toolarge"
	case errors.Is(err, fs.ErrPermission):
		return "permission"
	default:
		return "error"
	}
}

// fact is what the host knows about one path a provider asked about: the
// stat when it was first asked (taken before the provider's own call, so a
// change after it always shows), and digests of what was read or listed.
type fact struct {
	path       string
	kinds      factKind
	stat       statFact
	recordedAt time.Time
	readMax    int64
	readSum    [32]byte
	listSum    [32]byte
	// sameRound is the latest live round whose check found the path
	// unchanged.
	sameRound uint64
}

// racy reports whether the path changed so recently that a rewrite in the
// same timestamp tick would not show in its stat facts.
func (f *fact) racy() bool {
	return f.stat.errClass == "" && f.kinds != 0 && !f.stat.mtime.Before(f.recordedAt.Add(-racyWindow))
}

// factRecorder records the facts of one provider's discovery.
type factRecorder struct {
	fsys     shared.HostFS
	now      func() time.Time
	mu       sync.Mutex
	facts    map[string]*fact
	order    []*fact
	overflow bool
}

func newFactRecorder(fsys shared.HostFS, now func() time.Time) *factRecorder {
	return &factRecorder{fsys: fsys, now: now, facts: map[string]*fact{}}
}

// observe stats path the first time a provider asks about it. It runs before
// the provider's call reaches the filesystem.
func (r *factRecorder) observe(ctx context.Context, path string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	_, seen := r.facts[path]
	full := len(r.order) >= maxFacts
	if full {
		r.overflow = true
	}
	r.mu.Unlock()
	if seen || full {
		return
	}
	at := r.now()
	st := statOf(ctx, r.fsys, path)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, seen := r.facts[path]; !seen {
		f := &fact{path: path, stat: st, recordedAt: at}
		r.facts[path] = f
		r.order = append(r.order, f)
	}
}

// adopt records f, a fact of the previous discovery found unchanged in this
// round, as this discovery's: the provider is told to reuse its answer, so
// the host neither reads the path again nor records it anew.
func (r *factRecorder) adopt(f *fact) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, seen := r.facts[f.path]; seen {
		return
	}
	if len(r.order) >= maxFacts {
		r.overflow = true
		return
	}
	r.facts[f.path] = f
	r.order = append(r.order, f)
}

// read records the digest of what a read of path returned.
func (r *factRecorder) read(path string, data []byte, err error, max int64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if f := r.facts[path]; f != nil && f.kinds&factRead == 0 {
		f.kinds |= factRead
		f.readMax = max
		f.readSum = readDigest(data, err)
	}
}

// list records the digest of a directory listing.
func (r *factRecorder) list(path string, entries []shared.DirEntry, err error) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if f := r.facts[path]; f != nil && f.kinds&factList == 0 {
		f.kinds |= factList
		f.listSum = listDigest(entries, err)
	}
}

func readDigest(data []byte, err error) [32]byte {
	if err != nil {
		return sha256.Sum256([]byte("error:" + errClass(err)))
	}
	return sha256.Sum256(data)
}

func listDigest(entries []shared.DirEntry, err error) [32]byte {
	h := sha256.New()
	if err != nil {
		h.Write([]byte("error:" + errClass(err)))
	}
	for _, e := range entries {
		h.Write([]byte(e.Name))
		h.Write([]byte{0, byte(e.Type >> 24), byte(e.Type >> 16), byte(e.Type >> 8), byte(e.Type)})
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// factSet is a finished recording, checked after each tool call.
type factSet struct {
	facts    []*fact
	overflow bool
	// byPath indexes facts, made when a prefetch first needs it.
	byPath map[string]*fact
}

func (r *factRecorder) done() *factSet {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &factSet{facts: r.order, overflow: r.overflow}
}

// changed re-checks every fact and returns the first path whose facts
// changed, or "" when none did. A stat that matches is trusted unless the
// path is racy; then its content or listing is read again and compared, and
// a match moves the fact's recording time forward so it stops being racy
// once the tick has passed.
//
// With a round (not 0) it checks every fact even after a change, and marks
// each one found unchanged with it: the re-discovery that follows tells the
// provider those answers are the ones it already has (see unchanged).
// Without, it stops at the first change.
//
// at is when the round began: a fact re-verified in it counts as recorded
// then, which is never later than its actual re-read.
func (s *factSet) changed(ctx context.Context, fsys shared.HostFS, at time.Time, round uint64) (string, bool) {
	if s.overflow {
		return "(more paths than the recording cap)", true
	}
	first := ""
	for _, f := range s.facts {
		switch {
		case f.verify(ctx, fsys, at):
			f.sameRound = round
		case round == 0:
			return f.path, true
		case first == "":
			first = f.path
		}
	}
	return first, first != ""
}

// verify reports whether f's path still has the facts recorded.
func (f *fact) verify(ctx context.Context, fsys shared.HostFS, at time.Time) bool {
	if f.stat.errClass == "refused" {
		return true // the policy does not change during a session
	}
	if !statOf(ctx, fsys, f.path).equal(f.stat) {
		return false
	}
	if !f.racy() {
		return true
	}
	if f.kinds&factRead != 0 {
		data, err := fsys.ReadFile(ctx, f.path, f.readMax)
		if readDigest(data, err) != f.readSum {
			return false
		}
	}
	if f.kinds&factList != 0 {
		entries, err := fsys.ReadDir(ctx, f.path)
		if listDigest(entries, err) != f.listSum {
			return false
		}
	}
	f.recordedAt = at
	return true
}

// unchanged returns the fact of path when the check of round found it
// unchanged and it vouches for the answer to call: the same stat answers a
// Stat, the same listing a ReadDir, the same content read with the same cap
// a ReadFile. A resolution is never vouched for: a link on the way can change
// without the target's stat showing it.
func (s *factSet) unchanged(call shared.Prefetched, round uint64) *fact {
	if s.byPath == nil {
		s.byPath = make(map[string]*fact, len(s.facts))
		for _, f := range s.facts {
			s.byPath[f.path] = f
		}
	}
	f := s.byPath[call.Path]
	if f == nil || f.sameRound != round {
		return nil
	}
	switch call.Op {
	case shared.PrefetchStat:
		return f
	case shared.PrefetchReadDir:
		if f.kinds&factList != 0 {
			return f
		}
	case shared.PrefetchReadFile:
		if f.kinds&factRead != 0 && f.readMax == call.MaxBytes {
			return f
		}
	}
	return nil
}

// paths lists the recorded paths, in the order they were first asked about.
func (s *factSet) paths() []string {
	out := make([]string, len(s.facts))
	for i, f := range s.facts {
		out[i] = f.path
	}
	return out
}
