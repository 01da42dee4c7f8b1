package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"time"

	"github.com/rulebroker/rulebroker/internal/wire"
	"github.com/rulebroker/rulebroker/plugin/frontmatter"
	"github.com/rulebroker/rulebroker/shared"
)

// hostFS presents the host's filesystem as an io/fs filesystem rooted at "/",
// so provider code uses fs.ReadDir, fs.ReadFile and fs.Stat and is tested on
// fstest.MapFS. Every call goes to the host, which applies its policy.
type hostFS struct {
	ctx context.Context // io/fs methods take no context; this is the Discover call's
	fs  shared.HostFS
	cap int64
	// parsed is the provider process's parse cache, handed to the files
	// read through this filesystem (see File).
	parsed *frontmatter.Cache
}

var (
	_ fs.StatFS     = (*hostFS)(nil)
	_ fs.ReadDirFS  = (*hostFS)(nil)
	_ fs.ReadFileFS = (*hostFS)(nil)
	_ batchReadFS   = (*hostFS)(nil)
)

// newHostFS reads at most limit bytes of any one file; parsed may be nil.
func newHostFS(ctx context.Context, f shared.HostFS, limit int64, parsed *frontmatter.Cache) *hostFS {
	return &hostFS{ctx: ctx, fs: f, cap: limit, parsed: parsed}
}

func (h *hostFS) parseCache() *frontmatter.Cache { return h.parsed }

// abs maps an io/fs name to the host's absolute path.
func abs(name string) string {
	if name == "." {
		return "/"
	}
	return "/" + name
}

func (h *hostFS) check(op, name string) error {
	if !fs.ValidPath(name) {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return nil
}

func (h *hostFS) Stat(name string) (fs.FileInfo, error) {
	if err := h.check("stat", name); err != nil {
		return nil, err
	}
	fi, err := h.fs.Stat(h.ctx, abs(name))
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return fileInfo{fi}, nil
}

func (h *hostFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := h.check("readdir", name); err != nil {
		return nil, err
	}
	entries, err := h.fs.ReadDir(h.ctx, abs(name))
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	out := make([]fs.DirEntry, len(entries))
	for i, e := range entries {
		out[i] = dirEntry{e: e, stat: func() (fs.FileInfo, error) { return h.Stat(joinName(name, e.Name)) }}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

func (h *hostFS) ReadFile(name string) ([]byte, error) {
	if err := h.check("read", name); err != nil {
		return nil, err
	}
	data, err := h.fs.ReadFile(h.ctx, abs(name), h.cap)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return data, nil
}

// readFiles reads all names in one round trip to the host.
func (h *hostFS) readFiles(names []string) []fileData {
	out := make([]fileData, len(names))
	paths := make([]string, 0, len(names))
	index := make(map[string][]int, len(names))
	for i, name := range names {
		out[i].Name = name
		if err := h.check("read", name); err != nil {
			out[i].Err = err
			continue
		}
		if _, seen := index[abs(name)]; !seen {
			paths = append(paths, abs(name))
		}
		index[abs(name)] = append(index[abs(name)], i)
	}
	for p, r := range h.readBatches(paths) {
		for _, i := range index[p] {
			out[i].Data = r.data
			if r.err != nil {
				out[i].Err = &fs.PathError{Op: "read", Path: out[i].Name, Err: r.err}
			}
		}
	}
	return out
}

type readResult struct {
	data []byte
	err  error
}

// readBatches reads paths (absolute, distinct) in as few calls as the wire
// allows. A request names at most wire.BatchNameBytes of paths, so no number
// of files or length of names makes it larger than the host accepts; a file
// the host did not read because the call's budget was spent is asked for
// again in the next call, which has a budget of its own. Every path gets a
// result.
func (h *hostFS) readBatches(paths []string) map[string]readResult {
	got := make(map[string]readResult, len(paths))
	for len(paths) > 0 {
		n, size := 0, 0
		for n < len(paths) && (n == 0 || size+len(paths[n]) <= wire.BatchNameBytes) {
			size += len(paths[n])
			n++
		}
		batch := paths[:n]
		paths = paths[n:]
		files, err := h.fs.ReadFiles(h.ctx, batch, h.cap)
		var again []string
		deferred := map[string]bool{}
		for _, f := range files {
			if errors.Is(f.Err, wire.ErrOverBudget) {
				again = append(again, f.Path)
				deferred[f.Path] = true
				continue
			}
			got[f.Path] = readResult{data: f.Data, err: f.Err}
		}
		if len(again) > 0 && len(again) < len(batch) {
			// Progress was made, so the next call reads at least one more.
			paths = append(again, paths...)
		} else {
			for _, p := range again {
				got[p] = readResult{err: fmt.Errorf("%w (and a call of its own made no progress)", wire.ErrOverBudget)}
			}
		}
		// A failed or short batch leaves some files unanswered: report each.
		cause := err
		if cause == nil {
			cause = io.ErrUnexpectedEOF
		}
		for _, p := range batch {
			if _, ok := got[p]; !ok && !deferred[p] {
				got[p] = readResult{err: cause}
			}
		}
	}
	return got
}

func (h *hostFS) Open(name string) (fs.File, error) {
	if err := h.check("open", name); err != nil {
		return nil, err
	}
	info, err := h.Stat(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: unwrapPathError(err)}
	}
	if info.IsDir() {
		return &openDir{h: h, name: name, info: info}, nil
	}
	data, err := h.ReadFile(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: unwrapPathError(err)}
	}
	return &openFile{Reader: bytes.NewReader(data), info: info}, nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}

func joinName(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

type fileInfo struct{ fi shared.FileInfo }

func (f fileInfo) Name() string       { return f.fi.Name }
func (f fileInfo) Size() int64        { return f.fi.Size }
func (f fileInfo) Mode() fs.FileMode  { return f.fi.Mode }
func (f fileInfo) ModTime() time.Time { return f.fi.ModTime }
func (f fileInfo) IsDir() bool        { return f.fi.Mode.IsDir() }
func (f fileInfo) Sys() any           { return f.fi }

type dirEntry struct {
	e    shared.DirEntry
	stat func() (fs.FileInfo, error)
}

func (d dirEntry) Name() string               { return d.e.Name }
func (d dirEntry) IsDir() bool                { return d.e.Type.IsDir() }
func (d dirEntry) Type() fs.FileMode          { return d.e.Type.Type() }
func (d dirEntry) Info() (fs.FileInfo, error) { return d.stat() }

type openFile struct {
	*bytes.Reader
	info fs.FileInfo
}

func (f *openFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *openFile) Close() error               { return nil }

type openDir struct {
	h       *hostFS
	name    string
	info    fs.FileInfo
	entries []fs.DirEntry
	read    bool
}

func (d *openDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *openDir) Close() error               { return nil }
func (d *openDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: fs.ErrInvalid}
}

func (d *openDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if !d.read {
		entries, err := d.h.ReadDir(d.name)
		if err != nil {
			return nil, err
		}
		d.entries, d.read = entries, true
	}
	if n <= 0 {
		out := d.entries
		d.entries = nil
		return out, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	if n > len(d.entries) {
		n = len(d.entries)
	}
	out := d.entries[:n]
	d.entries = d.entries[n:]
	return out, nil
}
