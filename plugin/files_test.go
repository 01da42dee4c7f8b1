package plugin

import (
	"io/fs"
	"path"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rulebroker/rulebroker/shared"
)

// failFS is fsys with reads of the named files failing with err, the way a
// file the user cannot read behaves.
type failFS struct {
	fs.FS
	fail map[string]error
}

func (f failFS) Open(name string) (fs.File, error) {
	if err, ok := f.fail[name]; ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return f.FS.Open(name)
}

// hostLikeFS answers ReadDir the way the host does: listing a file, or a
// path under one, fails with "not a directory" (shared.ErrNotDir).
type hostLikeFS struct{ fstest.MapFS }

func (h hostLikeFS) ReadDir(name string) ([]fs.DirEntry, error) {
	for p := name; p != "."; p = path.Dir(p) {
		if info, err := fs.Stat(h.MapFS, p); err == nil && !info.IsDir() {
			return nil, &fs.PathError{Op: "readdir", Path: name, Err: shared.ErrNotDir}
		}
	}
	return h.MapFS.ReadDir(name)
}

// batchFS counts ReadFiles calls, standing in for the host's filesystem.
type batchFS struct {
	fs.FS
	calls *int
}

func (b batchFS) readFiles(names []string) []fileData {
	*b.calls++
	out := make([]fileData, len(names))
	for i, n := range names {
		data, err := fs.ReadFile(b.FS, n)
		out[i] = fileData{Name: n, Data: data, Err: err}
	}
	return out
}

func names(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Name+"="+f.Path)
	}
	return out
}

func TestLoadDir(t *testing.T) {
	fsys := fstest.MapFS{
		"r/b.mdc":           {Data: []byte("b")},
		"r/a.md":            {Data: []byte("a")},
		"r/c.txt":           {Data: []byte("c")},
		"r/.hidden.md":      {Data: []byte("h")},
		"r/sub.md/x.md":     {Data: []byte("x")},
		"r/nested/n.md":     {Data: []byte("n")},
		"r/link.md":         {Data: []byte("../target.md"), Mode: fs.ModeSymlink},
		"r/dirlink.md":      {Data: []byte("../d"), Mode: fs.ModeSymlink},
		"r/dangling.md":     {Data: []byte("../nope.md"), Mode: fs.ModeSymlink},
		"r/A.MD":            {Data: []byte("upper")},
		"r/.md":             {Data: []byte("only ext")},
		"target.md":         {Data: []byte("via link")},
		"d/inside.md":       {Data: []byte("i")},
		"notadir":           {Data: []byte("file")},
		"unreadable/ok.md":  {Data: []byte("ok")},
		"unreadable/bad.md": {Data: []byte("bad")},
	}
	t.Run("sorted, filtered, symlinks followed", func(t *testing.T) {
		files, warnings := LoadDir(fsys, "r", ".md", ".mdc")
		want := []string{"a=r/a.md", "b=r/b.mdc", "link=r/link.md"}
		if got := names(files); !reflect.DeepEqual(got, want) {
			t.Errorf("files = %q, want %q", got, want)
		}
		if string(files[2].Data) != "via link" {
			t.Errorf("symlinked file read %q", files[2].Data)
		}
		if len(warnings) != 1 || warnings[0].Path != "r/dangling.md" || !strings.Contains(warnings[0].Message, "does not exist") {
			t.Errorf("warnings = %v, want one for the dangling link", warnings)
		}
	})
	t.Run("extension order does not change file order", func(t *testing.T) {
		files, _ := LoadDir(fsys, "r", ".mdc", ".md")
		if got := names(files); !reflect.DeepEqual(got, []string{"a=r/a.md", "b=r/b.mdc", "link=r/link.md"}) {
			t.Errorf("files = %q", got)
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		files, warnings := LoadDir(fsys, "nope/rules", ".md")
		if files != nil || warnings != nil {
			t.Errorf("got %v, %v; want nothing", files, warnings)
		}
	})
	t.Run("a file where the directory should be", func(t *testing.T) {
		files, warnings := LoadDir(fsys, "notadir", ".md")
		if files != nil || len(warnings) != 1 || warnings[0].Path != "notadir" {
			t.Errorf("got %v, %v; want one warning", files, warnings)
		}
	})
	t.Run("a file where the directory should be, as the host reports it", func(t *testing.T) {
		files, warnings := LoadDir(hostLikeFS{fsys}, "notadir", ".md")
		if files != nil || len(warnings) != 1 || warnings[0].Path != "notadir" || warnings[0].Message != "not a directory; no rules read from it" {
			t.Errorf("got %v, %v; want one warning", files, warnings)
		}
		// A file further up only means the directory does not exist.
		files, warnings = LoadDir(hostLikeFS{fsys}, "notadir/rules", ".md")
		if files != nil || warnings != nil {
			t.Errorf("got %v, %v; want nothing", files, warnings)
		}
		if files, _ := LoadDir(hostLikeFS{fsys}, "r", ".md"); len(files) != 2 {
			t.Errorf("a directory lists as usual: %v", names(files))
		}
	})
	t.Run("unreadable file", func(t *testing.T) {
		ffs := failFS{fsys, map[string]error{"unreadable/bad.md": fs.ErrPermission}}
		files, warnings := LoadDir(ffs, "unreadable", ".md")
		if got := names(files); !reflect.DeepEqual(got, []string{"ok=unreadable/ok.md"}) {
			t.Errorf("files = %q", got)
		}
		if len(warnings) != 1 || warnings[0].Path != "unreadable/bad.md" || warnings[0].Message != "cannot read file: permission denied" {
			t.Errorf("warnings = %v", warnings)
		}
	})
	t.Run("unreadable directory", func(t *testing.T) {
		ffs := failFS{fsys, map[string]error{"r": fs.ErrPermission}}
		_, warnings := LoadDir(ffs, "r", ".md")
		if len(warnings) != 1 || warnings[0].Message != "cannot read directory: permission denied" {
			t.Errorf("warnings = %v", warnings)
		}
	})
	t.Run("one batched read", func(t *testing.T) {
		calls := 0
		files, _ := LoadDir(batchFS{fsys, &calls}, "r", ".md", ".mdc")
		if len(files) != 3 || calls != 1 {
			t.Errorf("%d files in %d ReadFiles calls, want 3 in 1", len(files), calls)
		}
		calls = 0
		LoadDir(batchFS{fsys, &calls}, "r", ".none")
		if calls != 0 {
			t.Errorf("ReadFiles called %d times for no files", calls)
		}
	})
}

func TestLoadFiles(t *testing.T) {
	fsys := failFS{fstest.MapFS{
		"a/x.md":      {Data: []byte("x")},
		"a/.hidden":   {Data: []byte("h")},
		"a/denied.md": {Data: []byte("d")},
	}, map[string]error{"a/denied.md": fs.ErrPermission}}
	files, warnings := LoadFiles(fsys, []string{"a/x.md", "a/missing.md", "a/.hidden", "a/denied.md"})
	if got := names(files); !reflect.DeepEqual(got, []string{"x=a/x.md", "=a/.hidden"}) {
		t.Errorf("files = %q", got)
	}
	if len(warnings) != 1 || warnings[0].Path != "a/denied.md" {
		t.Errorf("warnings = %v", warnings)
	}
}
