// Package instructions is the instruction reconciler: it loads every
// AGENTS.md / CLAUDE.md style candidate (plus local overlays and the
// user-global file) that applies to the session's working directory, dedups
// copies per directory, renders them for the model, and after every tool call
// works out what changed and says so in one message.
//
// Every candidate that exists is loaded (not only the first per directory),
// copies within one directory are deduplicated, each (directory, candidate)
// pair is its own scope, and every round reconciles all known scopes.
// Symlinks are followed; a scope whose resolve, stat or read fails is
// "unavailable" and keeps what it had loaded — a failure is never taken for
// a removal. All file access goes through a shared.HostFS, so a policy gate
// (workfs.Policy) decides what may be read.
//
// Choices made where the specs are silent:
//
//   - A file over the per-file cap is unavailable (a loaded scope keeps its
//     last content), with a warning naming the file and the cap.
//   - An unavailable scope's warning is reported in the round where it first
//     appears or changes, not again every round while it stays the same.
//   - "</system-reminder" inside content or a path, in any letter case, is
//     written "<\/system-reminder"; backslashes already there gain one more,
//     so reminder.Unescape reverses reminder.Escape exactly. Paths holding
//     control characters are shown quoted. Metadata carries paths unescaped.
//   - The byte budget bounds the file contents of one message (paths and
//     wording are not counted). Contents are admitted from the most specific
//     file (deepest directory, last candidate) backwards; whatever does not
//     fit is listed in a notice with its size and marked omitted in the
//     metadata. The scope still counts as loaded, so it is not re-announced
//     every round; the notice tells the model to read it directly.
//   - Dedup compares contents after JS trim with CRLF and lone CR turned
//     into LF, so copies that differ only by surrounding white space, a BOM
//     or line endings are one file (the first candidate is kept). The raw
//     digest and the rendered text stay the kept file's original bytes.
//   - A remove carries no digest.
//   - A workspace directory whose relative path is "user-global" is labelled
//     "./user-global" so it never collides with the user-global scope.
//   - Baseline on a reconciler restored from a snapshot is an ordinary round
//     (only differences are announced, in update wording).
package instructions

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/rulebroker/rulebroker/host-sdk/diag"
	"github.com/rulebroker/rulebroker/host-sdk/lifecycle"
	"github.com/rulebroker/rulebroker/host-sdk/workfs"
	"github.com/rulebroker/rulebroker/internal/jstext"
	"github.com/rulebroker/rulebroker/shared"
)

// racyWindow widens git's racy-timestamp test. Git compares a file's mtime
// with the index file's mtime, both stamped by the same filesystem clock; we
// compare it with the process clock, and filesystem timestamps can lag it by
// a coarse tick. A file whose mtime is not older than (recorded time -
// racyWindow) may have been rewritten after it was read without its version
// changing, so it is re-read next round.
const racyWindow = 2 * time.Second

// Action is the kind of a change.
type Action string

// The three changes a round can make to a scope.
const (
	ActionSet     Action = "set"     // the scope becomes loaded
	ActionReplace Action = "replace" // a loaded scope's bytes changed
	ActionRemove  Action = "remove"  // a loaded scope is absent, empty or now a duplicate
)

// Change is one change to one scope, both in a Round and in a message's
// Metadata. Digest is the new raw digest; a remove has none. Omitted is set
// only in Metadata: it marks a set or replace whose bytes were cut to stay
// within the budget (the notice in the text lists it too).
type Change struct {
	Action    Action `json:"action"`
	Key       string `json:"key"`
	Dir       string `json:"dir"`
	Candidate string `json:"candidate"`
	Path      string `json:"path"`
	Digest    string `json:"digest,omitempty"`
	Omitted   bool   `json:"omitted,omitempty"`
}

// Scope is one loaded scope. Digest is of the file's bytes; TrimmedDigest,
// which dedup compares, is of its content after JS trim with CRLF and lone CR
// turned into LF (see dedupForm).
type Scope struct {
	Key           string `json:"key"`
	Dir           string `json:"dir"`
	Candidate     string `json:"candidate"`
	Path          string `json:"path"`
	ResolvedPath  string `json:"resolvedPath"`
	Digest        string `json:"digest"`
	TrimmedDigest string `json:"trimmedDigest"`
}

// Round is what one reconciliation round produced. Message is nil when
// nothing changed. Warnings have Source "instructions" and name the file
// concerned.
type Round struct {
	Changes  []Change       `json:"changes"`
	Message  *Message       `json:"message,omitempty"`
	Warnings []diag.Warning `json:"warnings,omitempty"`
}

// source names the reconciler in its warnings.
const source = "instructions"

// Outcome is the round as any tools/post-execute subscriber answers: its
// message, if any, and its warnings.
func (rd Round) Outcome() lifecycle.Outcome {
	o := lifecycle.Outcome{Warnings: rd.Warnings}
	if rd.Message != nil {
		o.Messages = []lifecycle.Message{{Role: rd.Message.Role, Text: rd.Message.Text}}
	}
	return o
}

// Reconciler keeps a session's instruction files current. Rounds are
// serialized; all methods are safe for concurrent use.
type Reconciler struct {
	cfg   Config
	cands []string // cfg.Candidates then cfg.LocalCandidates: dedup order
	mu    sync.Mutex
	st    state
}

type state struct {
	started bool   // a round has run (or a started state was restored)
	root    string // workspace root, found by the first round
	// dirs holds every directory label probed each round, with the round in
	// which a tool last touched it (for the least-recently-touched bound;
	// the baseline directories and those holding a loaded scope are never
	// dropped).
	dirs   map[string]uint64
	seq    uint64                // rounds run: the clock of dirs
	loaded map[string]Scope      // by key
	cache  map[string]cacheEntry // by key: version cache of present files
	// warned holds, by key, the warning last reported for an unavailable
	// scope, so a host hears about it once, not after every tool call.
	warned map[string]diag.Warning
	// said holds the other warnings already reported this session (a
	// touched path too long to follow, directories dropped), so the same
	// one is not repeated every round.
	said map[diag.Warning]bool
	// realCwd is cwd with its symlinks resolved ("" until known, or when it
	// cannot be), so a touched path given in resolved form still counts as
	// below cwd.
	realCwd    string
	cwdChecked bool
	// dirsOwned and cacheOwned say whether this copy of the state may write
	// to dirs and cache, or must copy them first (see clone).
	dirsOwned, cacheOwned bool
}

// cacheEntry is one row of the version cache: the version of the file a
// scope resolved to when its digests were computed. It is also the row a
// snapshot stores, so the JSON names are part of the snapshot format.
type cacheEntry struct {
	Key           string `json:"key"`
	ResolvedPath  string `json:"resolvedPath"`
	Dev           uint64 `json:"dev"`
	Ino           uint64 `json:"ino"`
	Size          int64  `json:"size"`
	MtimeNs       int64  `json:"mtimeNs"`
	CtimeNs       int64  `json:"ctimeNs"`
	Digest        string `json:"digest"`
	TrimmedDigest string `json:"trimmedDigest"`
	// RecordedAtNs is when the digests were computed, for the racy-timestamp
	// guard.
	RecordedAtNs int64 `json:"recordedAtNs"`
}

// matches reports whether the file at resolved, with version fi, is the one
// c describes and was already settled when c was recorded, so c's digests
// can be trusted without reading it.
func (c cacheEntry) matches(resolved string, fi shared.FileInfo) bool {
	return c.Digest != "" && c.ResolvedPath == resolved && c.Dev == fi.Dev && c.Ino == fi.Ino && c.Size == fi.Size &&
		c.MtimeNs == fi.ModTime.UnixNano() && c.CtimeNs == fi.Ctime.UnixNano() &&
		c.MtimeNs < c.RecordedAtNs-int64(racyWindow)
}

func newState() state {
	return state{dirs: map[string]uint64{}, loaded: map[string]Scope{}, cache: map[string]cacheEntry{}, said: map[diag.Warning]bool{}}
}

// clone copies s so a round can work on it and commit it whole, or not at
// all. loaded is shared, not copied: a round never writes to it, it replaces
// it with the loaded set its plan computed. dirs and cache are copied only
// when the round first writes to them (setDir, setCache...).
func (s state) clone() state {
	n := s
	n.seq++
	n.dirsOwned, n.cacheOwned = false, false
	n.said = make(map[diag.Warning]bool, len(s.said))
	for k, v := range s.said {
		n.said[k] = v
	}
	return n
}

// setDir and delDir write to dirs, copying it first if it is still shared
// with the committed state: an unchanged round then copies nothing.
func (s *state) setDir(label string, seq uint64) {
	if old, ok := s.dirs[label]; ok && old == seq {
		return
	}
	s.ownDirs()
	s.dirs[label] = seq
}

func (s *state) delDir(label string) {
	if _, ok := s.dirs[label]; ok {
		s.ownDirs()
		delete(s.dirs, label)
	}
}

func (s *state) ownDirs() {
	if !s.dirsOwned {
		s.dirs, s.dirsOwned = maps.Clone(s.dirs), true
	}
}

// setCache and delCache write to cache the same way.
func (s *state) setCache(key string, e cacheEntry) {
	s.ownCache()
	s.cache[key] = e
}

func (s *state) delCache(key string) {
	if _, ok := s.cache[key]; ok {
		s.ownCache()
		delete(s.cache, key)
	}
}

func (s *state) ownCache() {
	if !s.cacheOwned {
		s.cache, s.cacheOwned = maps.Clone(s.cache), true
	}
}

// New validates cfg, fills in defaults, and returns a Reconciler with empty
// state.
func New(cfg Config) (*Reconciler, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Reconciler{cfg: c, cands: c.candidates(), st: newState()}, nil
}

// Root returns the workspace root, or "" before the first round.
func (r *Reconciler) Root() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st.root
}

// Baseline runs the first round: the user-global scope and every directory
// from the workspace root down to cwd, from empty state, so every loaded file
// is a set. On a reconciler restored from a snapshot it is an ordinary round
// over the same directories, announcing only what changed.
func (r *Reconciler) Baseline(ctx context.Context) (Round, error) {
	return r.round(ctx, true, nil)
}

// PostExecute reconciles after a tool ran: every known scope, plus the
// directories between cwd (exclusive) and the folder of each touched path
// below cwd. Paths are absolute or relative to cwd. Called before any
// Baseline, it includes the baseline directories too.
func (r *Reconciler) PostExecute(ctx context.Context, tool string, paths []string) (Round, error) {
	_ = tool // the tool's name does not change what is probed
	return r.round(ctx, false, paths)
}

// Attach subscribes the reconciler to tools/post-execute; the returned
// Subscription reads each event's Round (From) and detaches it
// (Unsubscribe). Subscribe it before other subscribers so that instruction
// changes are injected first.
func (r *Reconciler) Attach(lc lifecycle.Lifecycle) *lifecycle.Subscription[Round] {
	return lifecycle.Subscribe(lc, "instructions", func(ctx context.Context, ev lifecycle.PostExecute) (Round, error) {
		return r.PostExecute(ctx, ev.Tool, ev.Paths)
	})
}

// Loaded returns the loaded scopes in render order.
func (r *Reconciler) Loaded() []Scope {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Scope, 0, len(r.st.loaded))
	for _, s := range r.st.loaded {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return r.less(out[i].Dir, out[i].Candidate, out[j].Dir, out[j].Candidate) })
	return out
}

// less orders scopes for rendering: user-global, then root to deepest (ties by
// label), candidates in configured order.
func (r *Reconciler) less(d1, c1, d2, c2 string) bool {
	if d1 != d2 {
		if a, b := dirDepth(d1), dirDepth(d2); a != b {
			return a < b
		}
		return d1 < d2
	}
	return r.candIndex(c1) < r.candIndex(c2)
}

func (r *Reconciler) candIndex(c string) int {
	for i, n := range r.cands {
		if n == c {
			return i
		}
	}
	return len(r.cands)
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// dedupForm is what dedup compares: b after JS trim, with CRLF and lone CR
// turned into LF, so copies saved with other line endings are duplicates.
func dedupForm(b []byte) []byte {
	b = jstext.TrimBytes(b)
	if bytes.IndexByte(b, '\r') < 0 {
		return b
	}
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(b, []byte("\r"), []byte("\n"))
}

// emptyDigest is digest(nil): the trimmed digest of a file with no content.
const emptyDigest = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

type outcome int

const (
	absent outcome = iota
	present
	unavailable
)

// probe is what one round learned about one scope.
type probe struct {
	Scope // Key, Dir, Candidate, Path; ResolvedPath and digests when present
	out   outcome
	fi    shared.FileInfo
	data  []byte // nil unless read this round
	read  bool
	// warning says why the scope is unavailable, naming the file.
	warning diag.Warning
}

// unavailable marks p unavailable for the reason msg.
func (p *probe) unavailable(msg string) {
	p.out = unavailable
	p.warning = diag.Warning{Source: source, Path: p.Path, Message: msg}
}

// isAbsent classifies an error as a confirmed absence: missing (a dangling
// link included) or a non-directory on the way. Everything else is
// "unavailable".
func isAbsent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, shared.ErrNotDir)
}

// round runs one reconciliation round. It works on a copy of the state and
// commits it only when the round succeeds, so a failed or cancelled round
// leaves the reconciler as it was.
func (r *Reconciler) round(ctx context.Context, baseline bool, touched []string) (Round, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return Round{}, err
	}
	st := r.st.clone()
	var warns []diag.Warning
	if st.root == "" {
		root, w, err := workfs.FindRoot(ctx, r.cfg.FS, r.cfg.Cwd, r.cfg.RootMarkers)
		if err != nil {
			return Round{}, err
		}
		for _, x := range w {
			x.Source = source
			warns = append(warns, x)
		}
		st.root = root
	}
	if !st.cwdChecked {
		// Best effort: without it, paths in resolved form are just not
		// recognised as below cwd, as before.
		if real, err := r.cfg.FS.Resolve(ctx, r.cfg.Cwd); err == nil && real != r.cfg.Cwd {
			st.realCwd = real
		}
		st.cwdChecked = true
	}
	first := !st.started
	now := r.cfg.Now().UnixNano()

	dirs, dirWarns, err := r.directories(ctx, &st, baseline || first, touched)
	if err != nil {
		return Round{}, err
	}
	probes, err := r.probeAll(ctx, st, dirs)
	if err != nil {
		return Round{}, err
	}
	pl, err := r.settle(ctx, probes, st.loaded)
	if err != nil {
		return Round{}, err
	}
	warns = append(warns, st.noteUnavailable(probes)...)
	st.recordVersions(probes, now)
	st.loaded = pl.loaded
	st.started = true
	r.forget(ctx, &st, probes)
	warns = append(warns, st.once(dirWarns)...)

	// Changes is never nil so a JSON consumer sees [] rather than null.
	rd := Round{Changes: append([]Change{}, pl.changes...), Warnings: warns}
	if len(pl.changes) > 0 {
		msg := r.render(first, pl, st.root)
		rd.Message = &msg
	}
	r.st = st
	return rd, nil
}

// directories adds to st.dirs the directories this round probes and returns
// every known one in render order. The baseline directories are the
// user-global one and every directory from the root down to cwd; a tool call
// adds the existing directories between cwd and each touched path below it;
// and a loaded scope's directory is always probed again.
func (r *Reconciler) directories(ctx context.Context, st *state, withBaseline bool, touched []string) ([]string, []diag.Warning, error) {
	if withBaseline {
		if r.cfg.DSHHome != "" {
			st.setDir(UserGlobalDir, st.seq)
		}
		for _, l := range r.baselineLabels(st.root) {
			st.setDir(l, st.seq)
		}
	}
	var warns []diag.Warning
	for _, p := range touched {
		ds, w := r.touchedDirs(st, p)
		if w != nil {
			warns = append(warns, *w)
			continue
		}
		if err := r.admit(ctx, st, ds); err != nil {
			return nil, nil, err
		}
	}
	for _, s := range st.loaded {
		if _, ok := st.dirs[s.Dir]; !ok {
			st.setDir(s.Dir, st.seq)
		}
	}
	if w, ok := r.bound(st); ok {
		warns = append(warns, w)
	}
	type byDepth struct {
		depth int
		label string
	}
	order := make([]byDepth, 0, len(st.dirs))
	for d := range st.dirs {
		order = append(order, byDepth{dirDepth(d), d})
	}
	slices.SortFunc(order, func(a, b byDepth) int {
		if a.depth != b.depth {
			return a.depth - b.depth
		}
		return strings.Compare(a.label, b.label)
	})
	dirs := make([]string, len(order))
	for i, o := range order {
		dirs[i] = o.label
	}
	return dirs, warns, nil
}

// baselineLabels are the labels of the directories from cwd up to the root.
func (r *Reconciler) baselineLabels(root string) []string {
	var out []string
	for d := r.cfg.Cwd; ; d = filepath.Dir(d) {
		if l, ok := dirLabel(root, d); ok {
			out = append(out, l)
		}
		if d == root || d == filepath.Dir(d) {
			break
		}
	}
	return out
}

// admit remembers the directories ds (deepest first, all below cwd) that
// exist. Known ones are only marked touched; of the unknown ones, the
// deepest that exists is found with one stat each from the bottom up, and
// it and its ancestors are remembered. A path to something that was deleted,
// or never existed, so adds nothing to probe every round.
func (r *Reconciler) admit(ctx context.Context, st *state, ds []string) error {
	labels := make([]string, len(ds))
	for i, d := range ds {
		l, ok := dirLabel(st.root, d)
		if !ok {
			return nil
		}
		labels[i] = l
	}
	exists := len(ds) // index of the deepest directory known to exist
	for i, d := range ds {
		if _, known := st.dirs[labels[i]]; known {
			exists = i
			break
		}
		fi, err := r.cfg.FS.Stat(ctx, d)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil && fi.Mode.IsDir() {
			exists = i
			break
		}
	}
	for _, l := range labels[min(exists, len(labels)):] {
		st.setDir(l, st.seq)
	}
	return nil
}

// MaxTouchedDirs bounds the directories a session remembers because a tool
// touched them; past it, the least recently touched are dropped (a later
// touch brings one back). Directories on the way from the root to cwd and
// those holding a loaded file do not count and are never dropped.
const MaxTouchedDirs = 4096

// bound drops the least recently touched directories beyond MaxTouchedDirs
// and says so.
func (r *Reconciler) bound(st *state) (diag.Warning, bool) {
	if len(st.dirs) <= MaxTouchedDirs {
		return diag.Warning{}, false // the common case, without building pinned
	}
	pinned := map[string]bool{UserGlobalDir: true}
	for _, l := range r.baselineLabels(st.root) {
		pinned[l] = true
	}
	for _, s := range st.loaded {
		pinned[s.Dir] = true
	}
	if len(st.dirs) <= MaxTouchedDirs+len(pinned) {
		return diag.Warning{}, false
	}
	var free []string
	for d := range st.dirs {
		if !pinned[d] {
			free = append(free, d)
		}
	}
	if len(free) <= MaxTouchedDirs {
		return diag.Warning{}, false
	}
	sort.Slice(free, func(i, j int) bool {
		if a, b := st.dirs[free[i]], st.dirs[free[j]]; a != b {
			return a < b
		}
		return free[i] < free[j]
	})
	for _, d := range free[:len(free)-MaxTouchedDirs] {
		st.delDir(d)
	}
	return diag.Warning{Source: source, Message: fmt.Sprintf(
		"more than %d directories touched this session: the least recently touched are no longer checked for instruction files until a tool touches them again",
		MaxTouchedDirs)}, true
}

// forget drops the touched directories that no longer exist: every
// candidate in them was absent this round, and the directory itself is gone
// (one stat, only for directories with no file in them).
func (r *Reconciler) forget(ctx context.Context, st *state, probes []*probe) {
	// Probes are in render order, so each directory's are contiguous.
	var pinned map[string]bool
	for i := 0; i < len(probes); {
		d, empty := probes[i].Dir, true
		for ; i < len(probes) && probes[i].Dir == d; i++ {
			empty = empty && probes[i].out == absent
		}
		if !empty {
			continue
		}
		if pinned == nil {
			pinned = map[string]bool{UserGlobalDir: true}
			for _, l := range r.baselineLabels(st.root) {
				pinned[l] = true
			}
		}
		if pinned[d] {
			continue
		}
		fi, err := r.cfg.FS.Stat(ctx, dirPath(st.root, r.cfg.DSHHome, d))
		if err == nil && !fi.Mode.IsDir() || err != nil && isAbsent(err) {
			st.delDir(d)
		}
	}
}

// once returns the warnings not yet reported this session and remembers
// them, up to maxSaid; past that a warning may be repeated, but memory stays
// bounded.
func (st *state) once(ws []diag.Warning) []diag.Warning {
	var out []diag.Warning
	for _, w := range ws {
		if st.said[w] {
			continue
		}
		if len(st.said) < maxSaid {
			st.said[w] = true
		}
		out = append(out, w)
	}
	return out
}

// maxSaid bounds the warnings remembered as already reported.
const maxSaid = 1024

// probeAll resolves and stats every scope of dirs, then reads in one batch
// the present files whose digests the version cache could not supply. The
// probes are in render order.
func (r *Reconciler) probeAll(ctx context.Context, st state, dirs []string) ([]*probe, error) {
	all := make([]probe, 0, len(dirs)*len(r.cands)+1)
	probes := make([]*probe, 0, cap(all))
	var toRead []*probe
	userGlobal := []string{UserGlobalFile}
	for _, d := range dirs {
		cands := r.cands
		if d == UserGlobalDir {
			if r.cfg.DSHHome == "" {
				continue // no user-global scope; a restored one is removed by decide
			}
			cands = userGlobal
		}
		base := dirPath(st.root, r.cfg.DSHHome, d)
		for _, c := range cands {
			// base is clean and c a plain name: concatenation is Join.
			all = append(all, probe{Scope: Scope{Key: ScopeKey(d, c), Dir: d, Candidate: c, Path: base + string(filepath.Separator) + c}})
			p := &all[len(all)-1]
			if err := r.stat(ctx, p, st.cache[p.Key]); err != nil {
				return nil, err
			}
			if p.out == present && !p.read && p.Digest == "" {
				toRead = append(toRead, p)
			}
			probes = append(probes, p)
		}
	}
	if err := r.readAll(ctx, toRead); err != nil {
		return nil, err
	}
	return probes, nil
}

// settle decides the round's changes. A set of a file whose digests came
// from the cache needs its bytes, so settle reads those and decides again:
// their digests may differ if the file changed under us, which can change
// the dedup decision. Every pass reads at least one probe not read before, so
// this ends.
func (r *Reconciler) settle(ctx context.Context, probes []*probe, loaded map[string]Scope) (plan, error) {
	for {
		pl := r.decide(probes, loaded)
		var missing []*probe
		for _, p := range pl.needBytes {
			if !p.read {
				missing = append(missing, p)
			}
		}
		if len(missing) == 0 {
			return pl, nil
		}
		if err := r.readAll(ctx, missing); err != nil {
			return plan{}, err
		}
	}
}

// noteUnavailable returns the warnings of unavailable scopes that are new or
// different since the last round, and remembers the current ones.
func (st *state) noteUnavailable(probes []*probe) []diag.Warning {
	var out []diag.Warning
	warned := map[string]diag.Warning{}
	for _, p := range probes {
		if p.out != unavailable || p.warning.Message == "" {
			continue
		}
		if st.warned[p.Key] != p.warning {
			out = append(out, p.warning)
		}
		warned[p.Key] = p.warning
	}
	st.warned = warned
	return out
}

// recordVersions commits the version cache: present files get fresh rows
// (recorded at now when read this round), absent ones lose theirs, and
// unavailable ones keep their last.
func (st *state) recordVersions(probes []*probe, now int64) {
	for _, p := range probes {
		switch p.out {
		case present:
			rec := now
			old, ok := st.cache[p.Key]
			if ok && !p.read {
				rec = old.RecordedAtNs
			}
			row := cacheEntry{
				Key: p.Key, ResolvedPath: p.ResolvedPath, Dev: p.fi.Dev, Ino: p.fi.Ino, Size: p.fi.Size,
				MtimeNs: p.fi.ModTime.UnixNano(), CtimeNs: p.fi.Ctime.UnixNano(),
				Digest: p.Digest, TrimmedDigest: p.TrimmedDigest, RecordedAtNs: rec,
			}
			if !ok || row != old {
				st.setCache(p.Key, row)
			}
		case absent:
			st.delCache(p.Key)
		}
	}
}

// stat runs resolve then stat for one scope and fills in its outcome, reusing
// cached digests when the version is unchanged and not racy.
func (r *Reconciler) stat(ctx context.Context, p *probe, c cacheEntry) error {
	fail := func(op string, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if isAbsent(err) {
			p.out = absent
			return nil
		}
		p.unavailable(fmt.Sprintf("unavailable (%s failed: %v)", op, err))
		return nil
	}
	if r.unchanged(ctx, p, c) {
		return nil
	}
	res, err := r.cfg.FS.Resolve(ctx, p.Path)
	if err != nil {
		return fail("resolve", err)
	}
	fi, err := r.cfg.FS.Stat(ctx, res)
	if err != nil {
		return fail("stat", err)
	}
	if !fi.IsRegular() {
		p.out = absent // a directory, fifo or other non-file target
		return nil
	}
	p.ResolvedPath, p.fi = res, fi
	if fi.Size > r.cfg.MaxFileBytes {
		p.unavailable(fmt.Sprintf("unavailable: %d bytes exceeds the %d-byte per-file cap", fi.Size, r.cfg.MaxFileBytes))
		return nil
	}
	p.out = present
	if c.matches(res, fi) {
		p.Digest, p.TrimmedDigest = c.Digest, c.TrimmedDigest
	}
	return nil
}

// lstater is a filesystem that can stat a path without following a final
// symlink (workfs.OS and workfs.Policy can).
type lstater interface {
	Lstat(ctx context.Context, path string) (shared.FileInfo, error)
}

// unchanged is the fast path of an unchanged round: when the scope's file
// was last found at its own path (no symlink on the way) and the cache
// trusts its digests, one lstat that finds a plain file of the same version
// settles the scope. Anything else (a link now at the candidate path, a
// different inode because a directory on the way became a link elsewhere, a
// new size or time, an error) falls back to resolve and stat, which decide
// as before. One system call instead of four for every scope that did not
// change.
func (r *Reconciler) unchanged(ctx context.Context, p *probe, c cacheEntry) bool {
	if c.ResolvedPath != p.Path {
		return false
	}
	l, ok := r.cfg.FS.(lstater)
	if !ok {
		return false
	}
	fi, err := l.Lstat(ctx, p.Path)
	if err != nil || !fi.Mode.IsRegular() || fi.Size > r.cfg.MaxFileBytes || !c.matches(p.Path, fi) {
		return false
	}
	p.ResolvedPath, p.fi, p.out = p.Path, fi, present
	p.Digest, p.TrimmedDigest = c.Digest, c.TrimmedDigest
	return true
}

// readAll reads probes in one batch and classifies failures as stat does.
func (r *Reconciler) readAll(ctx context.Context, ps []*probe) error {
	if len(ps) == 0 {
		return nil
	}
	paths := make([]string, len(ps))
	for i, p := range ps {
		paths[i] = p.ResolvedPath
	}
	res, err := r.cfg.FS.ReadFiles(ctx, paths, r.cfg.MaxFileBytes)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// The whole batch failed: every file in it is unavailable.
		res = make([]shared.FileContent, len(ps))
		for i := range res {
			res[i].Err = err
		}
	}
	if len(res) != len(ps) {
		return fmt.Errorf("instructions: ReadFiles returned %d results for %d paths", len(res), len(ps))
	}
	for i, p := range ps {
		p.read = true
		if e := res[i].Err; e != nil {
			p.Digest, p.TrimmedDigest = "", ""
			if isAbsent(e) {
				p.out = absent
				continue
			}
			if errors.Is(e, shared.ErrTooLarge) {
				p.unavailable(fmt.Sprintf("unavailable: larger than the %d-byte per-file cap", r.cfg.MaxFileBytes))
			} else {
				p.unavailable(fmt.Sprintf("unavailable (read failed: %v)", e))
			}
			continue
		}
		p.data = res[i].Data
		p.Digest, p.TrimmedDigest = digest(p.data), digest(dedupForm(p.data))
	}
	return nil
}

// plan is the outcome of dedup for one round.
type plan struct {
	changes   []Change
	loaded    map[string]Scope
	bytes     map[string]*probe // content for each set/replace, by key
	needBytes []*probe
}

// decide re-runs per-directory dedup over the probes (which are in render
// order, so each directory's candidates are contiguous and in order) against
// the loaded state, and returns the changes and the new loaded set.
func (r *Reconciler) decide(probes []*probe, loaded map[string]Scope) plan {
	pl := plan{bytes: map[string]*probe{}}
	// next collects the new loaded set; when it is the old one exactly (the
	// common, unchanged round) the old map is reused rather than rebuilt.
	next := make([]Scope, 0, len(loaded))
	same := true
	keep := func(s Scope, old Scope, wasLoaded bool) {
		next = append(next, s)
		same = same && wasLoaded && s == old
	}
	// kept holds this directory's kept trimmed digests: a handful, so a
	// slice scanned is cheaper than a map made per directory.
	var kept keptSet
	dir := "\x00" // no label is this
	probedLoaded := 0
	for _, p := range probes {
		if p.Dir != dir {
			dir, kept = p.Dir, kept[:0]
		}
		old, wasLoaded := loaded[p.Key]
		if wasLoaded {
			probedLoaded++
		}
		ch := Change{Key: p.Key, Dir: p.Dir, Candidate: p.Candidate, Path: p.Path}
		switch p.out {
		case unavailable:
			// Keep whatever we had, unchanged and silent; it still claims
			// its content in this directory's dedup.
			if wasLoaded {
				keep(old, old, true)
				kept = append(kept, old.TrimmedDigest)
			}
		case absent:
			if wasLoaded {
				ch.Action = ActionRemove
				pl.changes = append(pl.changes, ch)
			}
		case present:
			if p.TrimmedDigest == emptyDigest || kept.has(p.TrimmedDigest) {
				if wasLoaded {
					ch.Action = ActionRemove
					pl.changes = append(pl.changes, ch)
				}
				continue
			}
			kept = append(kept, p.TrimmedDigest)
			keep(p.Scope, old, wasLoaded)
			ch.Digest = p.Digest
			switch {
			case !wasLoaded:
				ch.Action = ActionSet
			case old.Digest != p.Digest:
				ch.Action = ActionReplace
			default:
				continue // unchanged (a new resolved path alone is not news)
			}
			pl.changes = append(pl.changes, ch)
			pl.bytes[p.Key] = p
			pl.needBytes = append(pl.needBytes, p)
		}
	}
	if same && len(next) == len(loaded) {
		pl.loaded = loaded
	} else {
		pl.loaded = make(map[string]Scope, len(next))
		for _, s := range next {
			pl.loaded[s.Key] = s
		}
	}
	if probedLoaded == len(loaded) {
		return pl
	}
	// A loaded scope no round probed any more (its candidate is no longer
	// configured) is removed.
	visited := make(map[string]bool, len(probes))
	for _, p := range probes {
		visited[p.Key] = true
	}
	var gone []string
	for k := range loaded {
		if !visited[k] {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone)
	for _, k := range gone {
		s := loaded[k]
		pl.changes = append(pl.changes, Change{Action: ActionRemove, Key: k, Dir: s.Dir, Candidate: s.Candidate, Path: s.Path})
	}
	return pl
}

// keptSet is one directory's kept trimmed digests.
type keptSet []string

func (k keptSet) has(d string) bool { return slices.Contains(k, d) }

// touchedDirs returns the directories strictly below cwd down to the folder
// of p, deepest first, when p is below cwd: given relative to cwd, absolute,
// or absolute in resolved form when cwd is reached through a symlink. A path
// too long to be real gives a warning instead.
func (r *Reconciler) touchedDirs(st *state, p string) ([]string, *diag.Warning) {
	if p == "" || strings.IndexByte(p, 0) >= 0 {
		return nil, nil
	}
	if workfs.Implausible(p) {
		return nil, &diag.Warning{Source: source, Path: clipPath(p), Message: fmt.Sprintf(
			"touched path ignored: longer than %d bytes or %d components, so it cannot name a real file",
			workfs.MaxPathBytes, workfs.MaxPathParts)}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.cfg.Cwd, p)
	}
	p = filepath.Clean(p)
	rel, ok := relBelow(r.cfg.Cwd, p)
	if !ok && st.realCwd != "" {
		rel, ok = relBelow(st.realCwd, p)
	}
	if !ok {
		return nil, nil
	}
	p = filepath.Join(r.cfg.Cwd, rel)
	var out []string
	for d := filepath.Dir(p); d != r.cfg.Cwd && len(d) > len(r.cfg.Cwd); d = filepath.Dir(d) {
		out = append(out, d)
	}
	return out, nil
}

// relBelow is p relative to dir when p is strictly below dir.
func relBelow(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// clipPath keeps a warning about an absurd path readable.
func clipPath(p string) string {
	if len(p) <= 120 {
		return p
	}
	cut := 120
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return p[:cut] + "…"
}
