package plugin

import (
	"slices"
	"testing"
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
