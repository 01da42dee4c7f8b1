package instructions

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rulebroker/rulebroker/host-sdk/workfs"
)

func mustDo(t testing.TB, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func realDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	mustDo(t, err)
	return d
}

// TestRealTree runs the reconciler on a real temporary tree with real
// symlinks, a fifo and a loop, through the policy gate.
func TestRealTree(t *testing.T) {
	ctx := context.Background()
	ws, home, canon, outside := realDir(t), realDir(t), realDir(t), realDir(t)
	j := filepath.Join
	mustDo(t,
		os.Mkdir(j(ws, ".git"), 0o755),
		os.MkdirAll(j(ws, "pkg", "deep"), 0o755),
		os.WriteFile(j(ws, "AGENTS.md"), []byte("root rules\n"), 0o644),
		os.Symlink("AGENTS.md", j(ws, "CLAUDE.md")),
		os.WriteFile(j(ws, "pkg", "CLAUDE.md"), []byte("pkg rules\n"), 0o644),
		os.Symlink("missing.md", j(ws, "pkg", "AGENTS.md")),
		syscall.Mkfifo(j(ws, "pkg", "AGENTS.local.md"), 0o644),
		os.Symlink("CLAUDE.local.md", j(ws, "pkg", "CLAUDE.local.md")),
		os.WriteFile(j(outside, "secret.md"), []byte("secret\n"), 0o644),
		os.Symlink(j(outside, "secret.md"), j(ws, "pkg", "deep", "AGENTS.md")),
		os.WriteFile(j(canon, "house.md"), []byte("house style\n"), 0o644),
		os.Symlink(j(canon, "house.md"), j(home, "AGENTS.md")),
	)
	gate, err := workfs.NewPolicy(ctx, workfs.OS{}, ws, home, canon)
	mustDo(t, err)
	r, err := New(Config{FS: gate, Cwd: j(ws, "pkg"), DSHHome: home})
	mustDo(t, err)
	rd, err := r.Baseline(ctx)
	mustDo(t, err)
	wantChanges(t, rd, "set user-global|AGENTS.md; set .|AGENTS.md; set pkg|CLAUDE.md")
	if count(rd.Message.Text, "root rules") != 1 || !strings.Contains(rd.Message.Text, "house style") {
		t.Fatalf("text:\n%s", rd.Message.Text)
	}
	// The loop in pkg/CLAUDE.local.md is unavailable (a warning), the
	// dangling link and the fifo are absent (silent).
	if len(rd.Warnings) != 1 || !strings.Contains(rd.Warnings[0].String(), "CLAUDE.local.md") {
		t.Fatalf("warnings: %v", rd.Warnings)
	}
	if s := r.Loaded()[0]; s.ResolvedPath != j(canon, "house.md") || s.Path != j(home, "AGENTS.md") {
		t.Fatalf("user-global scope: %+v", s)
	}

	// The escaping link below is refused by the policy: unavailable, with a
	// warning, never loaded.
	rd, err = r.PostExecute(ctx, "write", []string{"deep/x.go"})
	mustDo(t, err)
	wantChanges(t, rd, "")
	if !strings.Contains(fmt.Sprint(rd.Warnings), "outside the allowed roots") {
		t.Fatalf("warnings: %v", rd.Warnings)
	}

	// Replacing the symlink by a diverging real file loads it.
	mustDo(t, os.Remove(j(ws, "CLAUDE.md")), os.WriteFile(j(ws, "CLAUDE.md"), []byte("claude only\n"), 0o644))
	rd, err = r.PostExecute(ctx, "write", []string{j(ws, "CLAUDE.md")})
	mustDo(t, err)
	wantChanges(t, rd, "set .|CLAUDE.md")
	// And a real edit of pkg/CLAUDE.md is a replace.
	mustDo(t, os.WriteFile(j(ws, "pkg", "CLAUDE.md"), []byte("pkg rules, v2\n"), 0o644))
	rd, err = r.PostExecute(ctx, "edit", nil)
	mustDo(t, err)
	wantChanges(t, rd, "replace pkg|CLAUDE.md")
}

// benchTree makes n scopes: n/2 directories below the root, each with two
// different files, all dated an hour ago so none is racy.
func benchTree(b *testing.B, n int) (root string, files, touched []string) {
	root = realDir(b)
	mustDo(b, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	old := time.Now().Add(-time.Hour)
	for i := 0; i < n/2; i++ {
		d := filepath.Join(root, fmt.Sprintf("d%04d", i))
		mustDo(b, os.Mkdir(d, 0o755))
		for _, c := range []string{"AGENTS.md", "CLAUDE.md"} {
			p := filepath.Join(d, c)
			mustDo(b, os.WriteFile(p, []byte(fmt.Sprintf("# %s %d\nSome instructions for this directory.\n", c, i)), 0o644), os.Chtimes(p, old, old))
			files = append(files, p)
		}
		touched = append(touched, filepath.Join(d, "x.go"))
	}
	return root, files, touched
}

// BenchmarkUnchangedRound1000 is one PostExecute round over 1,000 present,
// unchanged scopes on the real filesystem: resolve + stat each, read nothing.
func BenchmarkUnchangedRound1000(b *testing.B) {
	ctx := context.Background()
	root, files, touched := benchTree(b, 1000)
	r, err := New(Config{FS: workfs.OS{}, Cwd: root, LocalCandidates: []string{}, Budget: -1})
	mustDo(b, err)
	_, err = r.Baseline(ctx)
	mustDo(b, err)
	rd, err := r.PostExecute(ctx, "setup", touched)
	mustDo(b, err)
	if len(rd.Changes) != len(files) || len(r.Loaded()) != len(files) {
		b.Fatalf("setup loaded %d scopes, want %d", len(r.Loaded()), len(files))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rd, err := r.PostExecute(ctx, "noop", nil)
		if err != nil || len(rd.Changes) != 0 {
			b.Fatalf("unchanged round: %v %+v", err, rd.Changes)
		}
	}
}

// BenchmarkStat1000 is the raw cost of os.Stat on the same 1,000 files, for
// comparison with BenchmarkUnchangedRound1000.
func BenchmarkStat1000(b *testing.B) {
	_, files, _ := benchTree(b, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, f := range files {
			if _, err := os.Stat(f); err != nil {
				b.Fatal(err)
			}
		}
	}
}
