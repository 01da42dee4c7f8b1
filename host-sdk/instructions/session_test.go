package instructions

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rulebroker/rulebroker/host-sdk/workfs"
	"github.com/rulebroker/rulebroker/shared"
)

// A touched path far longer than any real path costs one warning for the
// session, not a probe (and a warning) per component, every round.
func TestAbsurdTouchedPathWarnsOnce(t *testing.T) {
	f := newFixture(t, "/w")
	f.baseline()
	long := "/w/" + strings.Repeat("abcdefghi/", 600) + "x.go" // 6 KB
	f.m.ResetCounts()
	rd := f.post(long)
	wantChanges(t, rd, "")
	if len(rd.Warnings) != 1 || !strings.Contains(rd.Warnings[0].Message, "touched path ignored") || len(rd.Warnings[0].Path) > 130 {
		t.Fatalf("want one short warning, got %d: %.300v", len(rd.Warnings), rd.Warnings)
	}
	if c := f.m.Counts(); c.Stat+c.Resolve > 20 {
		t.Fatalf("the long path was followed: %+v", c)
	}
	// The same path again, in this and later rounds: nothing more to say.
	if rd := f.post(long, long); len(rd.Warnings) != 0 {
		t.Fatalf("warned again: %v", rd.Warnings)
	}
	// Too many components, each short.
	deep := "/w/" + strings.Repeat("a/", 300) + "x.go"
	if rd := f.post(deep); len(rd.Warnings) != 1 {
		t.Fatalf("deep path: %v", rd.Warnings)
	}
	if n := len(f.r.st.dirs); n > 3 {
		t.Fatalf("remembered %d directories", n)
	}
}

// Only directories that exist are remembered: a touched path to something
// deleted (or never there) adds nothing to probe every later round, and a
// remembered directory that disappears is forgotten.
func TestOnlyExistingTouchedDirsAreRemembered(t *testing.T) {
	f := newFixture(t, "/w")
	f.m.Mkdir("/w/real/sub")
	f.baseline()
	wantChanges(t, f.post("gone/deeper/x.go", "real/sub/nothere/y.go"), "")
	got := map[string]bool{}
	for d := range f.r.st.dirs {
		got[d] = true
	}
	if got["gone"] || got["gone/deeper"] || got["real/sub/nothere"] || !got["real"] || !got["real/sub"] {
		t.Fatalf("remembered %v", got)
	}
	// Created later, gone/ is not probed until a tool touches it.
	f.m.WriteFile("/w/gone/AGENTS.md", []byte("g"))
	wantChanges(t, f.post(), "")
	wantChanges(t, f.post("gone/x.go"), "set gone|AGENTS.md")
	// real/sub is removed: forgotten after one round finds it gone.
	f.m.Remove("/w/real/sub")
	f.post()
	if _, ok := f.r.st.dirs["real/sub"]; ok {
		t.Fatal("a removed directory is still probed")
	}
}

// At most MaxTouchedDirs touched directories are remembered; past that the
// least recently touched are dropped, with one note for the session.
func TestTouchedDirsAreBounded(t *testing.T) {
	f := newFixture(t, "/w")
	f.baseline()
	f.m.WriteFile("/w/d0/AGENTS.md", []byte("zero"))
	wantChanges(t, f.post("d0/x.go"), "set d0|AGENTS.md")
	f.m.WriteFile("/w/d1/CLAUDE.md", []byte("one"))
	f.m.Remove("/w/d1/CLAUDE.md") // d1 exists, empty
	f.post("d1/x.go")
	var notes int
	for i := 2; i < MaxTouchedDirs+10; i += 500 {
		var batch []string
		for j := i; j < min(i+500, MaxTouchedDirs+10); j++ {
			f.m.Mkdir(fmt.Sprintf("/w/d%d", j))
			batch = append(batch, fmt.Sprintf("d%d/x.go", j))
		}
		notes += len(f.post(batch...).Warnings)
	}
	if notes != 1 {
		t.Fatalf("want one note about dropped directories, got %d", notes)
	}
	if n := len(f.r.st.dirs); n > MaxTouchedDirs+3 {
		t.Fatalf("%d directories remembered", n)
	}
	// d0 holds a loaded file, so it is kept; d1 was the least recently
	// touched and is dropped: a file created there is found only when a
	// tool touches it again.
	if _, ok := f.r.st.dirs["d0"]; !ok {
		t.Fatal("a directory holding a loaded file was dropped")
	}
	f.m.WriteFile("/w/d1/AGENTS.md", []byte("one"))
	wantChanges(t, f.post(), "")
	wantChanges(t, f.post("d1/y.go"), "set d1|AGENTS.md")
}

// When cwd is reached through a symlink (/tmp → /private/tmp, a symlinked
// checkout), a touched path in resolved form is still below cwd, and its
// directories are probed under cwd's spelling.
func TestSymlinkedCwdSeesResolvedTouchedPaths(t *testing.T) {
	ctx := context.Background()
	real, links := realDir(t), realDir(t)
	j := filepath.Join
	mustDo(t,
		os.Mkdir(j(real, ".git"), 0o755),
		os.MkdirAll(j(real, "pkg", "deep"), 0o755),
		os.WriteFile(j(real, "pkg", "deep", "AGENTS.md"), []byte("deep rules\n"), 0o644),
		os.Symlink(real, j(links, "checkout")),
	)
	cwd := j(links, "checkout")
	r, err := New(Config{FS: workfs.OS{}, Cwd: cwd})
	mustDo(t, err)
	_, err = r.Baseline(ctx)
	mustDo(t, err)
	rd, err := r.PostExecute(ctx, "write", []string{j(real, "pkg", "deep", "main.go")})
	mustDo(t, err)
	wantChanges(t, rd, "set pkg/deep|AGENTS.md")
	if p := rd.Changes[0].Path; p != j(cwd, "pkg", "deep", "AGENTS.md") {
		t.Fatalf("path %s, want it under cwd's spelling", p)
	}
}

// countingOS is workfs.OS with counters, Lstat included, so the fast path of
// an unchanged round runs and can be checked on a real tree.
type countingOS struct {
	workfs.OS
	lstats, resolves, reads int
}

func (c *countingOS) Lstat(ctx context.Context, p string) (shared.FileInfo, error) {
	c.lstats++
	return c.OS.Lstat(ctx, p)
}

func (c *countingOS) Resolve(ctx context.Context, p string) (string, error) {
	c.resolves++
	return c.OS.Resolve(ctx, p)
}

func (c *countingOS) ReadFiles(ctx context.Context, ps []string, max int64) ([]shared.FileContent, error) {
	c.reads += len(ps)
	return c.OS.ReadFiles(ctx, ps, max)
}

// An unchanged round settles each plain, unchanged file with one lstat, and
// still notices every way the file behind a candidate path can change: a
// symlink put in its place, a directory on the way replaced by a link to
// another, a rewrite.
func TestUnchangedRoundFastPath(t *testing.T) {
	ctx := context.Background()
	ws, other := realDir(t), realDir(t)
	j := filepath.Join
	old := time.Now().Add(-time.Hour)
	write := func(p, text string) {
		t.Helper()
		mustDo(t, os.MkdirAll(filepath.Dir(p), 0o755), os.WriteFile(p, []byte(text), 0o644), os.Chtimes(p, old, old))
	}
	mustDo(t, os.Mkdir(j(ws, ".git"), 0o755))
	write(j(ws, "AGENTS.md"), "root\n")
	write(j(ws, "a", "AGENTS.md"), "in a\n")
	write(j(ws, "b", "AGENTS.md"), "in b\n")
	write(j(other, "AGENTS.md"), "elsewhere\n")
	write(j(other, "b2", "AGENTS.md"), "in b2\n")
	fsys := &countingOS{}
	r, err := New(Config{FS: fsys, Cwd: ws, LocalCandidates: []string{}})
	mustDo(t, err)
	_, err = r.Baseline(ctx)
	mustDo(t, err)
	round := func(paths ...string) Round {
		t.Helper()
		rd, err := r.PostExecute(ctx, "write", paths)
		mustDo(t, err)
		return rd
	}
	wantChanges(t, round("a/x.go", "b/x.go"), "set a|AGENTS.md; set b|AGENTS.md")

	*fsys = countingOS{}
	wantChanges(t, round(), "")
	if fsys.reads != 0 || fsys.lstats < 3 || fsys.resolves != 3 { // 3 absent CLAUDE.md still resolve
		t.Fatalf("unchanged round: %+v", *fsys)
	}

	// A symlink where the file was: the link's target is loaded.
	mustDo(t, os.Remove(j(ws, "AGENTS.md")), os.Symlink(j(other, "AGENTS.md"), j(ws, "AGENTS.md")))
	rd := round()
	wantChanges(t, rd, "replace .|AGENTS.md")
	if !strings.Contains(rd.Message.Text, "elsewhere") {
		t.Fatalf("text: %s", rd.Message.Text)
	}
	// A directory on the way becomes a link to another directory.
	mustDo(t, os.RemoveAll(j(ws, "b")), os.Symlink(j(other, "b2"), j(ws, "b")))
	wantChanges(t, round(), "replace b|AGENTS.md")
	// A rewrite of the same size.
	mustDo(t, os.WriteFile(j(ws, "a", "AGENTS.md"), []byte("in A\n"), 0o644))
	wantChanges(t, round(), "replace a|AGENTS.md")
}
