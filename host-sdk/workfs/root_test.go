package workfs

import (
	"context"
	"io/fs"
	"testing"

	"github.com/rulebroker/rulebroker/host-sdk/workfs/workfstest"
)

func TestFindRoot(t *testing.T) {
	ctx := context.Background()
	m := workfstest.NewMem()
	m.WriteFile("/w/.git/HEAD", []byte("ref"))
	m.Mkdir("/w/a/b")
	for cwd, want := range map[string]string{"/w/a/b": "/w", "/w": "/w"} {
		root, warns, err := FindRoot(ctx, m, cwd, []string{".git"})
		if err != nil || root != want || len(warns) != 0 {
			t.Errorf("FindRoot(%s) = %q, %v, %v; want %q", cwd, root, warns, err, want)
		}
	}
	// No marker anywhere: cwd is the root.
	if root, _, _ := FindRoot(ctx, m, "/w/a/b", []string{"go.mod"}); root != "/w/a/b" {
		t.Errorf("without a marker: root = %q", root)
	}
}

func TestFindRootQuietOutsideThePolicy(t *testing.T) {
	m := workfstest.NewMem()
	m.WriteFile("/w/p/AGENTS.md", []byte("x"))
	m.FailWith("/w/.git", fs.ErrPermission) // inside the roots: worth a warning
	pol, err := NewPolicy(context.Background(), m, "/w")
	if err != nil {
		t.Fatal(err)
	}
	root, warns, err := FindRoot(context.Background(), pol, "/w/p", []string{".git"})
	if err != nil {
		t.Fatal(err)
	}
	if root != "/w/p" {
		t.Errorf("root = %q", root)
	}
	// /w/.git is refused by the filesystem and reported; / is outside the
	// policy's roots and is not.
	if len(warns) != 1 || warns[0].Path != "/w/.git" {
		t.Errorf("warnings = %q", warns)
	}
}
