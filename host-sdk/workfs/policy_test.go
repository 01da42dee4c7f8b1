package workfs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rulebroker/rulebroker/host-sdk/workfs/workfstest"
)

func TestPolicyMem(t *testing.T) {
	ctx := context.Background()
	m := workfstest.NewMem()
	m.WriteFile("/ws/AGENTS.md", []byte("in"))
	m.WriteFile("/secret/key", []byte("out"))
	m.Symlink("/secret/key", "/ws/CLAUDE.md")
	m.Symlink("AGENTS.md", "/ws/LOCAL.md")
	p, err := NewPolicy(ctx, m, "/ws")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := p.ReadFile(ctx, "/ws/AGENTS.md", 0); err != nil || string(b) != "in" {
		t.Fatalf("inside: %q %v", b, err)
	}
	if b, err := p.ReadFile(ctx, "/ws/LOCAL.md", 0); err != nil || string(b) != "in" {
		t.Fatalf("link inside: %q %v", b, err)
	}
	if fi, err := p.Stat(ctx, "/ws/LOCAL.md"); err != nil || fi.Name != "LOCAL.md" {
		t.Fatalf("stat link inside: %+v %v", fi, err)
	}
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrOutsideRoots) || !errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: want refusal, got %v", what, err)
		}
	}
	_, err = p.ReadFile(ctx, "/secret/key", 0)
	refused("outside", err)
	if !strings.Contains(err.Error(), "/secret/key") {
		t.Errorf("refusal does not name the path: %v", err)
	}
	_, err = p.ReadFile(ctx, "/ws/CLAUDE.md", 0)
	refused("read via link", err)
	_, err = p.Stat(ctx, "/ws/CLAUDE.md")
	refused("stat via link", err)
	_, err = p.Resolve(ctx, "/ws/CLAUDE.md")
	refused("resolve via link", err)
	_, err = p.ReadDir(ctx, "/secret")
	refused("readdir", err)
	_, err = p.Stat(ctx, "/ws/../secret/key")
	refused("dot-dot", err)
	_, err = p.Stat(ctx, "/wsx/a")
	refused("sibling prefix", err)
	_, err = p.Stat(ctx, "relative")
	refused("relative", err)
	if _, err := p.Stat(ctx, "/ws/none"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing inside stays absent: %v", err)
	}
	res, err := p.ReadFiles(ctx, []string{"/ws/AGENTS.md", "/ws/CLAUDE.md", "/ws/LOCAL.md"}, 0)
	if err != nil || string(res[0].Data) != "in" || string(res[2].Data) != "in" || res[1].Path != "/ws/CLAUDE.md" {
		t.Fatalf("batch: %+v %v", res, err)
	}
	refused("batch", res[1].Err)
	if _, err := NewPolicy(ctx, m, "rel"); err == nil {
		t.Error("relative root accepted")
	}
}

func TestPolicyOS(t *testing.T) {
	ctx := context.Background()
	base := tree(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "x"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "x"), filepath.Join(base, "escape.md")); err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy(ctx, OS{}, base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ReadFile(ctx, filepath.Join(base, "CLAUDE.md"), 100); err != nil {
		t.Errorf("inside link: %v", err)
	}
	if _, err := p.Stat(ctx, filepath.Join(base, "escape.md")); !errors.Is(err, ErrOutsideRoots) {
		t.Errorf("escape: %v", err)
	}
}
