package plugin

import (
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestProjectDirs(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  Request
		want []string
	}{
		{"cwd is the root", Request{Cwd: "w", WorkspaceRoot: "w"}, []string{"w"}},
		{"cwd below the root", Request{Cwd: "w/a/b", WorkspaceRoot: "w"}, []string{"w", "w/a", "w/a/b"}},
		{"the filesystem root", Request{Cwd: "w/a", WorkspaceRoot: "."}, []string{".", "w", "w/a"}},
		{"no root", Request{Cwd: "w/a"}, []string{"w/a"}},
		{"cwd outside the root", Request{Cwd: "x/a", WorkspaceRoot: "w"}, []string{"x/a"}},
		{"a root that is a prefix but no parent", Request{Cwd: "work/a", WorkspaceRoot: "w"}, []string{"work/a"}},
		{"extra dirs below cwd", Request{Cwd: "w/a", WorkspaceRoot: "w", ExtraDirs: []string{"w/a/x/y", "w/a/x/z", "w/b", "w/a"}},
			[]string{"w", "w/a", "w/a/x", "w/a/x/y", "w/a/x/z"}},
		{"no cwd", Request{WorkspaceRoot: "w"}, nil},
	} {
		if got := ProjectDirs(tc.req); !slices.Equal(got, tc.want) {
			t.Errorf("%s: ProjectDirs = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// The file cap keeps the first files in path order and names itself in one
// warning; the real cap is large enough for any folder a flat read loads.
func TestLoadTreeFileCap(t *testing.T) {
	fsys := fstest.MapFS{
		"r/a.mdc":       {Data: []byte("a")},
		"r/b/c.mdc":     {Data: []byte("c")},
		"r/b/d.mdc":     {Data: []byte("d")},
		"r/e.mdc":       {Data: []byte("e")},
		"r/.hidden.mdc": {Data: []byte("h")},
	}
	files, warnings := loadTree(fsys, "r", 3, ".mdc")
	var got []string
	for _, f := range files {
		got = append(got, f.Path)
	}
	if strings.Join(got, " ") != "r/a.mdc r/b/c.mdc r/b/d.mdc" {
		t.Errorf("files = %v", got)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0].Message, "more than 3 rule files") || warnings[0].Path != "r" {
		t.Errorf("warnings = %v", warnings)
	}
	if MaxTreeFiles < 100_000 {
		t.Errorf("MaxTreeFiles = %d: a folder the reference read loads must load in native mode too", MaxTreeFiles)
	}
}

// countingFS counts ReadDir calls per directory.
type countingFS struct {
	fstest.MapFS
	reads map[string]int
}

func (c countingFS) ReadDir(name string) ([]fs.DirEntry, error) {
	c.reads[name]++
	return c.MapFS.ReadDir(name)
}

// Each folder of a rule tree is listed once: every listing is a round trip
// to the host, and a warning about an entry must not be reported twice.
func TestLoadTreeListsEachFolderOnce(t *testing.T) {
	fsys := countingFS{MapFS: fstest.MapFS{
		"r/a.mdc":     {Data: []byte("a")},
		"r/b/c.mdc":   {Data: []byte("c")},
		"r/b/d/e.mdc": {Data: []byte("e")},
		"r/f/g.mdc":   {Data: []byte("g")},
	}, reads: map[string]int{}}
	files, _ := LoadTree(fsys, "r", ".mdc")
	if len(files) != 4 {
		t.Fatalf("files = %v", files)
	}
	for dir, n := range fsys.reads {
		if n != 1 {
			t.Errorf("%s listed %d times", dir, n)
		}
	}
	if len(fsys.reads) != 4 {
		t.Errorf("listed %v, want r, r/b, r/b/d, r/f", fsys.reads)
	}
}
