// Package workfstest is an in-memory shared.HostFS for tests (the way
// testing/fstest serves io/fs): symlinks, fifos, injected errors, controllable
// timestamps and inode numbers, and call counters, so code that reads a
// workspace through a HostFS is tested without touching the disk. It lives
// apart from workfs so production binaries never link a test double.
package workfstest

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rulebroker/rulebroker/shared"
)

// maxLinks bounds symlink following, like the kernel's limit of 40.
const maxLinks = 40

type memKind int

const (
	memDir memKind = iota
	memFile
	memLink
	memFifo
)

type memNode struct {
	kind   memKind
	data   []byte
	target string // for links
	mtime  time.Time
	ctime  time.Time
	ino    uint64
}

// Mem is an in-memory shared.HostFS for tests. Paths are slash-separated and
// absolute. It holds regular files, directories, symlinks (relative or
// absolute targets; loops fail with syscall.ELOOP), and fifos; errors can be
// injected per path; timestamps and inode numbers can be set so version
// caches can be exercised; and it counts its calls. It is safe for concurrent
// use.
//
// Every mutation advances an internal clock by one second and stamps the
// touched node's mtime and ctime with it, so ordinary edits change a file's
// version; SetTimes and SetIno override that to model edits that do not.
type Mem struct {
	mu      sync.Mutex
	nodes   map[string]*memNode
	fails   map[string]error
	rfails  map[string]error // reads only
	clock   time.Time
	nextIno uint64

	stats, resolves, readDirs, readFile, readFiles, filesRead atomic.Int64
}

var _ shared.HostFS = (*Mem)(nil)

// MemCounts is a snapshot of a Mem's call counters.
type MemCounts struct {
	Stat, Resolve, ReadDir int64
	ReadFile               int64 // ReadFile calls
	ReadFiles              int64 // ReadFiles calls
	FilesRead              int64 // files read by either, counting each path of a batch
}

// NewMem returns a Mem holding only the root directory.
func NewMem() *Mem {
	m := &Mem{
		nodes:   map[string]*memNode{},
		fails:   map[string]error{},
		rfails:  map[string]error{},
		clock:   time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		nextIno: 2,
	}
	m.nodes["/"] = &memNode{kind: memDir, mtime: m.clock, ctime: m.clock, ino: 1}
	return m
}

// Counts returns the call counters.
func (m *Mem) Counts() MemCounts {
	return MemCounts{
		Stat: m.stats.Load(), Resolve: m.resolves.Load(), ReadDir: m.readDirs.Load(),
		ReadFile: m.readFile.Load(), ReadFiles: m.readFiles.Load(), FilesRead: m.filesRead.Load(),
	}
}

// ResetCounts zeroes the call counters.
func (m *Mem) ResetCounts() {
	for _, c := range []*atomic.Int64{&m.stats, &m.resolves, &m.readDirs, &m.readFile, &m.readFiles, &m.filesRead} {
		c.Store(0)
	}
}

// FailWith makes every call naming path, or resolving through it, fail with
// err (wrapped with the operation and path). A nil err clears the injection.
func (m *Mem) FailWith(p string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil {
		delete(m.fails, clean(p))
		return
	}
	m.fails[clean(p)] = err
}

// FailReadsWith makes ReadFile and ReadFiles of p (the path as given) fail
// with err while Stat and Resolve still succeed, as when a file becomes
// unreadable or vanishes between a stat and a read. A nil err clears it.
func (m *Mem) FailReadsWith(p string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil {
		delete(m.rfails, clean(p))
		return
	}
	m.rfails[clean(p)] = err
}

// WriteFile creates or overwrites a regular file, creating parent
// directories. Overwriting keeps the inode, as an in-place write does.
func (m *Mem) WriteFile(p string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p = clean(p)
	m.mkdirAll(path.Dir(p))
	now := m.tick()
	if n, ok := m.nodes[p]; ok && n.kind == memFile {
		n.data = append([]byte(nil), data...)
		n.mtime, n.ctime = now, now
		return
	}
	m.nodes[p] = m.newNode(memFile, now)
	m.nodes[p].data = append([]byte(nil), data...)
	m.touchParent(p, now)
}

// Mkdir creates a directory and its parents.
func (m *Mem) Mkdir(p string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mkdirAll(clean(p))
}

// Symlink creates link pointing at target (relative to link's directory
// unless absolute), replacing whatever was at link.
func (m *Mem) Symlink(target, link string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	link = clean(link)
	m.mkdirAll(path.Dir(link))
	m.removeAll(link)
	m.nodes[link] = m.newNode(memLink, m.tick())
	m.nodes[link].target = target
	m.touchParent(link, m.clock)
}

// Mkfifo creates a named pipe (a non-regular file).
func (m *Mem) Mkfifo(p string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p = clean(p)
	m.mkdirAll(path.Dir(p))
	m.removeAll(p)
	m.nodes[p] = m.newNode(memFifo, m.tick())
	m.touchParent(p, m.clock)
}

// Remove deletes p and, for a directory, everything below it. Removing a
// symlink removes the link, not its target.
func (m *Mem) Remove(p string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.removeAll(clean(p))
	m.touchParent(clean(p), m.tick())
}

// SetTimes sets the mtime and ctime of p itself (not following links).
func (m *Mem) SetTimes(p string, mtime, ctime time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.nodes[clean(p)]
	if !ok {
		return &fs.PathError{Op: "settimes", Path: p, Err: fs.ErrNotExist}
	}
	n.mtime, n.ctime = mtime, ctime
	return nil
}

// SetIno sets the inode number of p itself, e.g. to model an atomic
// replace-by-rename.
func (m *Mem) SetIno(p string, ino uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.nodes[clean(p)]
	if !ok {
		return &fs.PathError{Op: "setino", Path: p, Err: fs.ErrNotExist}
	}
	n.ino = ino
	return nil
}

// Now returns the Mem clock: the time stamped on the last mutation.
func (m *Mem) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.clock
}

func (m *Mem) tick() time.Time {
	m.clock = m.clock.Add(time.Second)
	return m.clock
}

func (m *Mem) newNode(k memKind, now time.Time) *memNode {
	m.nextIno++
	return &memNode{kind: k, mtime: now, ctime: now, ino: m.nextIno}
}

func (m *Mem) mkdirAll(p string) {
	if n, ok := m.nodes[p]; ok && n.kind == memDir {
		return
	}
	if p != "/" {
		m.mkdirAll(path.Dir(p))
	}
	m.removeAll(p)
	m.nodes[p] = m.newNode(memDir, m.tick())
	m.touchParent(p, m.clock)
}

// touchParent stamps p's directory as changed, as adding or removing an
// entry does on a real filesystem, so a lister's cached stat sees it.
func (m *Mem) touchParent(p string, now time.Time) {
	if p == "/" {
		return
	}
	if d, ok := m.nodes[path.Dir(p)]; ok && d.kind == memDir {
		d.mtime, d.ctime = now, now
	}
}

func (m *Mem) removeAll(p string) {
	if p == "/" {
		return
	}
	delete(m.nodes, p)
	prefix := p + "/"
	for k := range m.nodes {
		if strings.HasPrefix(k, prefix) {
			delete(m.nodes, k)
		}
	}
}

func clean(p string) string { return path.Clean("/" + p) }

// walk resolves p component by component. With followLast false a final
// symlink is returned as is. It returns the resolved path and its node.
func (m *Mem) walk(op, p string, followLast bool) (string, *memNode, error) {
	if !path.IsAbs(p) {
		return "", nil, &fs.PathError{Op: op, Path: p, Err: fs.ErrInvalid}
	}
	if err := m.fails[clean(p)]; err != nil {
		return "", nil, &fs.PathError{Op: op, Path: p, Err: err}
	}
	rest := strings.Split(strings.Trim(clean(p), "/"), "/")
	if rest[0] == "" {
		rest = nil
	}
	cur, links := "/", 0
	for len(rest) > 0 {
		comp := rest[0]
		rest = rest[1:]
		if comp == "." || comp == "" {
			continue
		}
		if comp == ".." {
			cur = path.Dir(cur)
			continue
		}
		if dir := m.nodes[cur]; dir.kind != memDir {
			return "", nil, &fs.PathError{Op: op, Path: p, Err: fmt.Errorf("%s: %w: %w", cur, shared.ErrNotDir, syscall.ENOTDIR)}
		}
		next := path.Join(cur, comp)
		if err := m.fails[next]; err != nil {
			return "", nil, &fs.PathError{Op: op, Path: p, Err: err}
		}
		n, ok := m.nodes[next]
		if !ok {
			return "", nil, &fs.PathError{Op: op, Path: p, Err: fs.ErrNotExist}
		}
		if n.kind == memLink && (len(rest) > 0 || followLast) {
			links++
			if links > maxLinks {
				return "", nil, &fs.PathError{Op: op, Path: p, Err: syscall.ELOOP}
			}
			// Restart from the root with the link's directory (already free
			// of links) plus the target, so ".." in a relative target is
			// taken against the real parent, as the kernel does.
			t := n.target
			if !path.IsAbs(t) {
				t = cur + "/" + t
			}
			var parts []string
			for _, s := range strings.Split(t, "/") {
				if s != "" {
					parts = append(parts, s)
				}
			}
			cur = "/"
			rest = append(parts, rest...)
			continue
		}
		cur = next
	}
	return cur, m.nodes[cur], nil
}

// Stat follows symlinks.
func (m *Mem) Stat(ctx context.Context, p string) (shared.FileInfo, error) {
	m.stats.Add(1)
	if err := ctx.Err(); err != nil {
		return shared.FileInfo{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, n, err := m.walk("stat", p, true)
	if err != nil {
		return shared.FileInfo{}, err
	}
	fi := shared.FileInfo{Name: path.Base(p), Size: int64(len(n.data)), ModTime: n.mtime, Dev: 1, Ino: n.ino, Ctime: n.ctime}
	switch n.kind {
	case memDir:
		fi.Mode = fs.ModeDir | 0o755
	case memFifo:
		fi.Mode = fs.ModeNamedPipe | 0o644
	default:
		fi.Mode = 0o644
	}
	return fi, nil
}

// Resolve follows every link.
func (m *Mem) Resolve(ctx context.Context, p string) (string, error) {
	m.resolves.Add(1)
	if err := ctx.Err(); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	res, _, err := m.walk("resolve", p, true)
	return res, err
}

// ReadDir lists a directory sorted by name.
func (m *Mem) ReadDir(ctx context.Context, p string) ([]shared.DirEntry, error) {
	m.readDirs.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, n, err := m.walk("readdir", p, true)
	if err != nil {
		return nil, err
	}
	if n.kind != memDir {
		return nil, &fs.PathError{Op: "readdir", Path: p, Err: fmt.Errorf("%w: %w", shared.ErrNotDir, syscall.ENOTDIR)}
	}
	var out []shared.DirEntry
	for k, c := range m.nodes {
		if k != "/" && path.Dir(k) == dir {
			var t fs.FileMode
			switch c.kind {
			case memDir:
				t = fs.ModeDir
			case memLink:
				t = fs.ModeSymlink
			case memFifo:
				t = fs.ModeNamedPipe
			}
			out = append(out, shared.DirEntry{Name: path.Base(k), Type: t})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ReadFile reads a regular file of at most max bytes (max <= 0: no cap).
func (m *Mem) ReadFile(ctx context.Context, p string, max int64) ([]byte, error) {
	m.readFile.Add(1)
	return m.read(ctx, p, max)
}

func (m *Mem) read(ctx context.Context, p string, max int64) ([]byte, error) {
	m.filesRead.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.rfails[clean(p)]; err != nil {
		return nil, &fs.PathError{Op: "read", Path: p, Err: err}
	}
	_, n, err := m.walk("read", p, true)
	if err != nil {
		return nil, err
	}
	switch n.kind {
	case memDir:
		return nil, &fs.PathError{Op: "read", Path: p, Err: syscall.EISDIR}
	case memFifo:
		return nil, &fs.PathError{Op: "read", Path: p, Err: fmt.Errorf("not a regular file: %w", fs.ErrInvalid)}
	}
	if max > 0 && int64(len(n.data)) > max {
		return nil, &fs.PathError{Op: "read", Path: p, Err: fmt.Errorf("larger than %d bytes: %w", max, shared.ErrTooLarge)}
	}
	return append([]byte(nil), n.data...), nil
}

// ReadFiles reads many files; each result carries its own error.
func (m *Mem) ReadFiles(ctx context.Context, paths []string, max int64) ([]shared.FileContent, error) {
	m.readFiles.Add(1)
	out := make([]shared.FileContent, len(paths))
	for i, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		data, err := m.read(ctx, p, max)
		out[i] = shared.FileContent{Path: p, Data: data, Err: err}
	}
	return out, nil
}
