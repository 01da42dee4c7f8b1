package workfs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rulebroker/rulebroker/shared"
)

// tree makes a real temporary tree: a file, a directory, a relative and an
// absolute symlink, a dangling link, a loop and a fifo.
func tree(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("hello\n"), 0o644))
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	must(os.Symlink("AGENTS.md", filepath.Join(dir, "CLAUDE.md")))
	must(os.Symlink(filepath.Join(dir, "AGENTS.md"), filepath.Join(dir, "sub", "abs.md")))
	must(os.Symlink("missing.md", filepath.Join(dir, "dangling.md")))
	must(os.Symlink("loop2", filepath.Join(dir, "loop1")))
	must(os.Symlink("loop1", filepath.Join(dir, "loop2")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	return dir
}

func TestOSStatFollowsLinks(t *testing.T) {
	ctx := context.Background()
	dir := tree(t)
	var o OS
	fi, err := o.Stat(ctx, filepath.Join(dir, "CLAUDE.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsRegular() || fi.Size != 6 || fi.Name != "CLAUDE.md" {
		t.Fatalf("stat through link: %+v", fi)
	}
	target, _ := o.Stat(ctx, filepath.Join(dir, "AGENTS.md"))
	if fi.Ino == 0 || fi.Ino != target.Ino || fi.Dev != target.Dev || fi.Ctime.IsZero() {
		t.Fatalf("identity not filled or not the target's: %+v vs %+v", fi, target)
	}
	fifo, err := o.Stat(ctx, filepath.Join(dir, "fifo"))
	if err != nil || fifo.IsRegular() || fifo.Mode&fs.ModeNamedPipe == 0 {
		t.Fatalf("fifo: %+v %v", fifo, err)
	}
}

func TestOSResolve(t *testing.T) {
	ctx := context.Background()
	dir := tree(t)
	var o OS
	for _, link := range []string{"CLAUDE.md", "sub/abs.md"} {
		got, err := o.Resolve(ctx, filepath.Join(dir, link))
		if err != nil || got != filepath.Join(dir, "AGENTS.md") {
			t.Errorf("resolve %s = %q, %v", link, got, err)
		}
	}
	done := make(chan error, 1)
	go func() {
		got, err := o.Resolve(ctx, filepath.Join(dir, "sub", "..", "fifo"))
		if err == nil && got != filepath.Join(dir, "fifo") {
			err = errors.New("resolved to " + got)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("fifo: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("resolving a fifo blocked")
	}
	_, err := o.Resolve(ctx, filepath.Join(dir, "dangling.md"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("dangling: %v", err)
	}
	_, err = o.Resolve(ctx, filepath.Join(dir, "loop1"))
	if err == nil || errors.Is(err, fs.ErrNotExist) || !errors.Is(err, syscall.ELOOP) {
		t.Errorf("loop must be ELOOP and not absent: %v", err)
	}
	_, err = o.Stat(ctx, filepath.Join(dir, "loop1"))
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat loop must not be absent: %v", err)
	}
	_, err = o.Resolve(ctx, filepath.Join(dir, "AGENTS.md", "x"))
	if !errors.Is(err, shared.ErrNotDir) {
		t.Errorf("through a file: %v", err)
	}
	_, err = o.Stat(ctx, filepath.Join(dir, "AGENTS.md", "x"))
	if !errors.Is(err, shared.ErrNotDir) || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat through a file: %v", err)
	}
}

func TestOSReadFile(t *testing.T) {
	ctx := context.Background()
	dir := tree(t)
	var o OS
	p := filepath.Join(dir, "AGENTS.md")
	if b, err := o.ReadFile(ctx, p, 6); err != nil || string(b) != "hello\n" {
		t.Fatalf("exact cap: %q %v", b, err)
	}
	_, err := o.ReadFile(ctx, p, 5)
	if !errors.Is(err, shared.ErrTooLarge) {
		t.Fatalf("over cap: %v", err)
	}
	if !strings.Contains(err.Error(), p) {
		t.Errorf("error does not name the path: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := o.ReadFile(ctx, filepath.Join(dir, "fifo"), 10); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("reading a fifo must fail")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a fifo blocked")
	}
	if _, err := o.ReadFile(ctx, filepath.Join(dir, "sub"), 10); err == nil {
		t.Error("reading a directory must fail")
	}
	if _, err := o.ReadFile(ctx, filepath.Join(dir, "nope"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	res, err := o.ReadFiles(ctx, []string{p, filepath.Join(dir, "nope")}, 100)
	if err != nil || len(res) != 2 || string(res[0].Data) != "hello\n" || !errors.Is(res[1].Err, fs.ErrNotExist) {
		t.Fatalf("batch: %+v %v", res, err)
	}
}

func TestOSReadDir(t *testing.T) {
	dir := tree(t)
	ents, err := OS{}.ReadDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name)
	}
	want := []string{"AGENTS.md", "CLAUDE.md", "dangling.md", "fifo", "loop1", "loop2", "sub"}
	if len(names) != len(want) {
		t.Fatalf("got %v", names)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("not sorted: %v", names)
		}
	}
	if ents[1].Type&fs.ModeSymlink == 0 || !ents[6].Type.IsDir() || ents[3].Type&fs.ModeNamedPipe == 0 {
		t.Errorf("type bits: %+v", ents)
	}
}

func TestOSCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (OS{}).Stat(ctx, "/"); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v", err)
	}
}

// Listing a fifo fails at once instead of blocking until a writer comes.
func TestReadDirOfAFifoDoesNotBlock(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no fifos here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := (OS{}).ReadDir(context.Background(), fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("listing a fifo succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("listing a fifo blocked")
	}
}
