package workfstest

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rulebroker/rulebroker/shared"
)

func TestMem(t *testing.T) {
	ctx := context.Background()
	m := NewMem()
	m.WriteFile("/w/AGENTS.md", []byte("a"))
	m.Symlink("AGENTS.md", "/w/CLAUDE.md")
	m.Symlink("/w/AGENTS.md", "/w/sub/abs.md")
	m.Symlink("../AGENTS.md", "/w/sub/rel.md")
	m.Symlink("nope", "/w/dangling")
	m.Symlink("l2", "/w/l1")
	m.Symlink("l1", "/w/l2")
	m.Symlink("sub", "/w/sublink")
	m.Mkfifo("/w/fifo")
	m.Mkdir("/w/dir")

	for _, p := range []string{"/w/CLAUDE.md", "/w/sub/abs.md", "/w/sub/rel.md", "/w/sublink/rel.md"} {
		if r, err := m.Resolve(ctx, p); err != nil || r != "/w/AGENTS.md" {
			t.Errorf("resolve %s = %q %v", p, r, err)
		}
	}
	if _, err := m.Resolve(ctx, "/w/dangling"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("dangling: %v", err)
	}
	_, err := m.Stat(ctx, "/w/l1")
	if !errors.Is(err, syscall.ELOOP) || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("loop: %v", err)
	}
	if _, err := m.Stat(ctx, "/w/AGENTS.md/x"); !errors.Is(err, shared.ErrNotDir) {
		t.Errorf("notdir: %v", err)
	}
	if fi, _ := m.Stat(ctx, "/w/fifo"); fi.IsRegular() {
		t.Error("fifo is regular")
	}
	if fi, _ := m.Stat(ctx, "/w/dir"); !fi.Mode.IsDir() {
		t.Error("dir is not a dir")
	}
	if _, err := m.ReadFile(ctx, "/w/fifo", 0); err == nil {
		t.Error("read fifo")
	}
	if _, err := m.ReadFile(ctx, "/w/AGENTS.md", 0); err != nil {
		t.Error(err)
	}
	m.WriteFile("/w/big", make([]byte, 10))
	if _, err := m.ReadFile(ctx, "/w/big", 9); !errors.Is(err, shared.ErrTooLarge) {
		t.Errorf("too large: %v", err)
	}
	m.FailWith("/w/AGENTS.md", fs.ErrPermission)
	if _, err := m.ReadFile(ctx, "/w/CLAUDE.md", 0); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("injected via link: %v", err)
	}
	m.FailWith("/w/AGENTS.md", nil)
	ents, err := m.ReadDir(ctx, "/w")
	if err != nil || ents[0].Name != "AGENTS.md" || ents[1].Type&fs.ModeSymlink == 0 {
		t.Errorf("readdir: %+v %v", ents, err)
	}

	before, _ := m.Stat(ctx, "/w/AGENTS.md")
	m.WriteFile("/w/AGENTS.md", []byte("b"))
	after, _ := m.Stat(ctx, "/w/AGENTS.md")
	if !after.ModTime.After(before.ModTime) || after.Ino != before.Ino {
		t.Errorf("rewrite: %+v -> %+v", before, after)
	}
	when := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := m.SetTimes("/w/AGENTS.md", when, when); err != nil {
		t.Fatal(err)
	}
	if err := m.SetIno("/w/AGENTS.md", 99); err != nil {
		t.Fatal(err)
	}
	if fi, _ := m.Stat(ctx, "/w/AGENTS.md"); !fi.ModTime.Equal(when) || fi.Ino != 99 {
		t.Errorf("set: %+v", fi)
	}
	m.Remove("/w/sub")
	if _, err := m.Stat(ctx, "/w/sub/rel.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("removed: %v", err)
	}

	m.ResetCounts()
	_, _ = m.ReadFiles(ctx, []string{"/w/AGENTS.md", "/w/CLAUDE.md"}, 0)
	_, _ = m.ReadFile(ctx, "/w/AGENTS.md", 0)
	_, _ = m.Stat(ctx, "/w/AGENTS.md")
	if c := m.Counts(); c.ReadFiles != 1 || c.ReadFile != 1 || c.FilesRead != 3 || c.Stat != 1 {
		t.Errorf("counts: %+v", c)
	}
}

func TestMemConcurrent(t *testing.T) {
	ctx := context.Background()
	m := NewMem()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(2)
		go func() { defer wg.Done(); m.WriteFile("/a/b", []byte("x")) }()
		go func() { defer wg.Done(); _, _ = m.Stat(ctx, "/a/b") }()
	}
	wg.Wait()
}
