package cline

import (
	"context"
	"io/fs"
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/rulebroker/rulebroker/plugin"
	pt "github.com/rulebroker/rulebroker/providers/internal/providertest"
)

func TestInfo(t *testing.T) {
	want := plugin.Info{Name: "cline", Version: "0.1.0", Priority: 40}
	if got := New().Info(); !reflect.DeepEqual(got, want) {
		t.Errorf("Info = %+v, want %+v", got, want)
	}
}

func TestDiscoverNearest(t *testing.T) {
	tests := []struct {
		name string
		fsys fstest.MapFS
		cwd  string
		want []string
	}{
		{
			name: "directory in cwd: its *.md files, sorted",
			fsys: fstest.MapFS{
				"work/p/.clinerules/b.md":             {Data: []byte("b")},
				"work/p/.clinerules/a.md":             {Data: []byte("a")},
				"work/p/.clinerules/notes.txt":        {Data: []byte("no")},
				"work/p/.clinerules/hooks/README.md":  {Data: []byte("not a rule")},
				"work/p/.clinerules/workflows/pr.md":  {Data: []byte("not a rule")},
				"work/p/.clinerules/.hidden.md":       {Data: []byte("hidden")},
				"work/.clinerules":                    {Data: []byte("farther, ignored")},
				"work/p/sub/.clinerules/elsewhere.md": {Data: []byte("below cwd, ignored")},
			},
			want: []string{"a project work/p/.clinerules/a.md", "b project work/p/.clinerules/b.md"},
		},
		{
			name: "file in cwd: one rule named clinerules",
			fsys: fstest.MapFS{"work/p/.clinerules": {Data: []byte("rules")}},
			want: []string{"clinerules project work/p/.clinerules"},
		},
		{
			name: "found in a parent",
			fsys: fstest.MapFS{"work/.clinerules/x.md": {Data: []byte("x")}},
			cwd:  "work/p/deep/er",
			want: []string{"x project work/.clinerules/x.md"},
		},
		{
			name: "nearest wins over farther",
			fsys: fstest.MapFS{
				"work/p/deep/.clinerules": {Data: []byte("near")},
				"work/p/.clinerules/x.md": {Data: []byte("far")},
				".clinerules":             {Data: []byte("root")},
			},
			cwd:  "work/p/deep/er",
			want: []string{"clinerules project work/p/deep/.clinerules"},
		},
		{
			name: "found at the filesystem root",
			fsys: fstest.MapFS{".clinerules": {Data: []byte("root")}},
			want: []string{"clinerules project .clinerules"},
		},
		{
			name: "empty .clinerules directory stops the search",
			fsys: fstest.MapFS{
				"work/p/.clinerules/readme.txt": {Data: []byte("no md")},
				"work/.clinerules":              {Data: []byte("farther")},
			},
			want: []string{},
		},
		{
			name: "none anywhere",
			fsys: fstest.MapFS{"work/p/README.md": {Data: []byte("x")}},
			want: []string{},
		},
		{
			name: "symlinked directory",
			fsys: fstest.MapFS{
				"work/p/.clinerules":     {Data: []byte("../shared/cline"), Mode: fs.ModeSymlink},
				"work/shared/cline/r.md": {Data: []byte("r")},
			},
			want: []string{"r project work/p/.clinerules/r.md"},
		},
		{
			name: "a file on the way up is not a directory",
			fsys: fstest.MapFS{
				"work/p":           {Data: []byte("a file, not a dir")},
				"work/.clinerules": {Data: []byte("found")},
			},
			want: []string{"clinerules project work/.clinerules"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cwd := tt.cwd
			if cwd == "" {
				cwd = pt.Cwd
			}
			res := pt.DiscoverIn(t, New(), tt.fsys, cwd)
			if got := pt.Rules(res.Rules); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("rules = %q\nwant    %q", got, tt.want)
			}
			if len(res.Warnings) != 0 {
				t.Errorf("warnings = %q", pt.Warnings(res.Warnings))
			}
		})
	}
}

func TestDiscoverFileContent(t *testing.T) {
	// Cline's CRCT files open with a line that looks like a fence but is not.
	data := "---CLINE_RULES_START---\n[COUNT]: 1\n---CLINE_RULES_END---\n"
	res := pt.Discover(t, New(), fstest.MapFS{"work/p/.clinerules": {Data: []byte(data)}})
	want := plugin.Rule{Name: "clinerules", Path: "work/p/.clinerules", Content: data[:len(data)-1], Level: plugin.LevelProject}
	if len(res.Rules) != 1 || !reflect.DeepEqual(res.Rules[0], want) {
		t.Errorf("rules = %+v\nwant    %+v", res.Rules, want)
	}
}

func TestDiscoverNormalization(t *testing.T) {
	const file = "work/p/.clinerules/r.md"
	tests := []struct {
		name     string
		data     string
		want     plugin.Rule
		warnings []string
	}{
		{
			name: "all fields",
			data: "---\ndescription: Style\nglobs: \"*.go\"\nalwaysApply: true\nttsr_trigger: panic\n---\nbody",
			want: plugin.Rule{Description: "Style", Globs: []string{"*.go"}, AlwaysApply: true, Condition: []string{"panic"}, Content: "body"},
		},
		{
			name: "globs array",
			data: "---\nglobs:\n  - a/**\n  - b/*.{c,h}\n---\nbody",
			want: plugin.Rule{Globs: []string{"a/**", "b/*.{c,h}"}, Content: "body"},
		},
		{
			name:     "alwaysApply only if a boolean; description only a string; ttsr_trigger only a string",
			data:     "---\nalwaysApply: yes please\ndescription: [x]\nttsr_trigger: {a: 1}\n---\nbody",
			want:     plugin.Rule{Content: "body"},
			warnings: []string{file + ": description: a list is not a string; ignored", file + `: alwaysApply: "yes please" is not a boolean; ignored`, file + ": ttsr_trigger: a mapping is not a string; ignored"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pt.OneRule(t, New(), "work/p/.clinerules/r.md", tt.data, tt.want, tt.warnings)
		})
	}
}

func TestDiscoverUnreadable(t *testing.T) {
	t.Run("one file of the directory", func(t *testing.T) {
		fsys := pt.FailFS{FS: fstest.MapFS{
			"work/p/.clinerules/a.md": {Data: []byte("a")},
			"work/p/.clinerules/b.md": {Data: []byte("b")},
		}, Fail: []string{"work/p/.clinerules/a.md"}, Err: fs.ErrPermission}
		res := pt.Discover(t, New(), fsys)
		if got, want := pt.Rules(res.Rules), []string{"b project work/p/.clinerules/b.md"}; !reflect.DeepEqual(got, want) {
			t.Errorf("rules = %q, want %q", got, want)
		}
		if got, want := pt.Warnings(res.Warnings), []string{"work/p/.clinerules/a.md: cannot read file: permission denied"}; !reflect.DeepEqual(got, want) {
			t.Errorf("warnings = %q, want %q", got, want)
		}
	})
	t.Run("a candidate that cannot be inspected stops the search", func(t *testing.T) {
		fsys := pt.FailFS{FS: fstest.MapFS{
			"work/p/.clinerules": {Data: []byte("near")},
			"work/.clinerules":   {Data: []byte("far")},
		}, Fail: []string{"work/p/.clinerules"}, Err: fs.ErrPermission}
		res := pt.Discover(t, New(), fsys)
		if len(res.Rules) != 0 {
			t.Errorf("rules = %q, want none", pt.Rules(res.Rules))
		}
		if got, want := pt.Warnings(res.Warnings), []string{"work/p/.clinerules: cannot inspect: permission denied; .clinerules search stopped here"}; !reflect.DeepEqual(got, want) {
			t.Errorf("warnings = %q, want %q", got, want)
		}
	})
}

func TestDiscoverCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New().Discover(ctx, plugin.Request{Cwd: "work/p", Home: "home/u", FS: fstest.MapFS{}}); err == nil {
		t.Error("Discover ignored a cancelled context")
	}
}
