package cursor

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
	want := plugin.Info{Name: "cursor", Version: "0.1.0", Priority: 50}
	if got := New().Info(); !reflect.DeepEqual(got, want) {
		t.Errorf("Info = %+v, want %+v", got, want)
	}
}

func TestDiscoverPathsOrderAndLevels(t *testing.T) {
	fsys := fstest.MapFS{
		"home/u/.cursor/rules/z.md":        {Data: []byte("user z")},
		"home/u/.cursor/rules/a.mdc":       {Data: []byte("user a")},
		"work/p/.cursor/rules/b.mdc":       {Data: []byte("project b")},
		"work/p/.cursor/rules/a.md":        {Data: []byte("project a")},
		"work/p/.cursor/rules/readme.txt":  {Data: []byte("no")},
		"work/p/.cursor/rules/sub/deep.md": {Data: []byte("not searched")},
		"work/p/.cursor/index.mdc":         {Data: []byte("outside rules/")},
		"work/p/.cursorrules":              {Data: []byte("legacy, never read")},
		"home/u/.cursorrules":              {Data: []byte("legacy, never read")},
	}
	res := pt.Discover(t, New(), fsys)
	want := []string{
		"a user home/u/.cursor/rules/a.mdc",
		"z user home/u/.cursor/rules/z.md",
		"a project work/p/.cursor/rules/a.md",
		"b project work/p/.cursor/rules/b.mdc",
	}
	if got := pt.Rules(res.Rules); !reflect.DeepEqual(got, want) {
		t.Errorf("rules = %q\nwant    %q", got, want)
	}
	// The legacy file is not read, but the user is told; the one in home is
	// no project's and is left alone.
	wantWarnings := []string{"work/p/.cursorrules: legacy .cursorrules is not read; move its rules to .cursor/rules/*.mdc"}
	if got := pt.Warnings(res.Warnings); !reflect.DeepEqual(got, wantWarnings) {
		t.Errorf("warnings = %q\nwant       %q", got, wantWarnings)
	}
}

func TestDiscoverCwdIsHome(t *testing.T) {
	fsys := fstest.MapFS{"home/u/.cursor/rules/a.mdc": {Data: []byte("a")}}
	res := pt.DiscoverIn(t, New(), fsys, pt.Home)
	if got, want := pt.Rules(res.Rules), []string{"a user home/u/.cursor/rules/a.mdc"}; !reflect.DeepEqual(got, want) {
		t.Errorf("rules = %q, want %q (listed once)", got, want)
	}
}

func TestDiscoverNormalization(t *testing.T) {
	const file = "work/p/.cursor/rules/r.mdc"
	tests := []struct {
		name     string
		data     string
		want     plugin.Rule
		warnings []string
	}{
		{
			name: "all fields",
			data: "---\ndescription: Style\nglobs: [\"*.go\"]\nalwaysApply: true\nttsr_trigger: panic\n---\n\nbody\n",
			want: plugin.Rule{Description: "Style", Globs: []string{"*.go"}, AlwaysApply: true, Condition: []string{"panic"}, Content: "body"},
		},
		{
			name: "alwaysApply false is unset",
			data: "---\nalwaysApply: false\n---\nbody",
			want: plugin.Rule{Content: "body"},
		},
		{
			name:     "description only if a string",
			data:     "---\ndescription: 12\n---\nbody",
			want:     plugin.Rule{Content: "body"},
			warnings: []string{file + ": description: 12 is not a string; ignored"},
		},
		{
			name:     "alwaysApply only if a boolean",
			data:     "---\nalwaysApply: \"true\"\n---\nbody",
			want:     plugin.Rule{Content: "body"},
			warnings: []string{file + `: alwaysApply: "true" is not a boolean; ignored`},
		},
		{
			name:     "globs array keeps string elements only",
			data:     "---\nglobs: [\"*.ts\", 3, \"*.tsx\"]\n---\nbody",
			want:     plugin.Rule{Globs: []string{"*.ts", "*.tsx"}, Content: "body"},
			warnings: []string{file + ": globs: element 2 (3) is not a string; dropped"},
		},
		{
			name: "globs single string",
			data: "---\nglobs: \"**/*.ts, **/*.{js,jsx}\"\n---\nbody",
			want: plugin.Rule{Globs: []string{"**/*.ts", "**/*.{js,jsx}"}, Content: "body"},
		},
		{
			name: "empty globs and description (Cursor's blank template)",
			data: "---\ndescription: \nglobs: \nalwaysApply: true\n---\nbody",
			want: plugin.Rule{AlwaysApply: true, Content: "body"},
		},
		{
			name:     "ttsr_trigger string only",
			data:     "---\nttsr_trigger: [a, b]\n---\nbody",
			want:     plugin.Rule{Content: "body"},
			warnings: []string{file + ": ttsr_trigger: a list is not a string; ignored"},
		},
		{
			name:     "unquoted comma globs: YAML fails, fallback keeps the rest typed",
			data:     "---\ndescription: MD\nglobs: *.md,*.mdx\nalwaysApply: false\n---\nbody",
			want:     plugin.Rule{Description: "MD", Globs: []string{"*.md", "*.mdx"}, Content: "body"},
			warnings: []string{file + ": invalid YAML frontmatter: yaml: line 3: did not find expected alphabetic or numeric character; read with the line fallback"},
		},
		{
			name:     "Windsurf frontmatter in a Cursor file, with a description",
			data:     "---\ntrigger: model_decision\ndescription: Convex\n---\nbody",
			want:     plugin.Rule{Description: "Convex", Content: "body"},
			warnings: []string{file + `: trigger: "model_decision" is Windsurf's activation mode, which is not read`},
		},
		{
			name:     "Windsurf frontmatter in a Cursor file, trigger alone",
			data:     "---\ntrigger: model_decision\nglobs: \"*.ts\"\n---\nbody",
			want:     plugin.Rule{Globs: []string{"*.ts"}, Content: "body"},
			warnings: []string{file + `: trigger: "model_decision" is Windsurf's activation mode, which is not read; without description, alwaysApply or condition the rule is never offered to the model`},
		},
		{
			name:     "frontmatter only",
			data:     "---\nalwaysApply: true\n---\n",
			want:     plugin.Rule{AlwaysApply: true},
			warnings: []string{file + ": rule has frontmatter but no content"},
		},
		{
			name:     "empty file",
			data:     "",
			want:     plugin.Rule{},
			warnings: []string{file + ": empty rule file"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pt.OneRule(t, New(), "work/p/.cursor/rules/r.mdc", tt.data, tt.want, tt.warnings)
		})
	}
}

func TestDiscoverMissingDirs(t *testing.T) {
	res := pt.Discover(t, New(), fstest.MapFS{"work/p/.cursor/mcp.json": {Data: []byte("{}")}})
	if len(res.Rules) != 0 || len(res.Warnings) != 0 {
		t.Errorf("got %+v", res)
	}
}

func TestDiscoverSymlinks(t *testing.T) {
	fsys := fstest.MapFS{
		"work/p/.cursor/rules/link.mdc":   {Data: []byte("../../shared/rule.mdc"), Mode: fs.ModeSymlink},
		"work/p/.cursor/rules/broken.mdc": {Data: []byte("gone.mdc"), Mode: fs.ModeSymlink},
		"work/p/.cursor/rules/dir.md":     {Data: []byte("../../shared"), Mode: fs.ModeSymlink},
		"work/p/shared/rule.mdc":          {Data: []byte("---\nalwaysApply: true\n---\nshared")},
	}
	res := pt.Discover(t, New(), fsys)
	if len(res.Rules) != 1 || res.Rules[0].Name != "link" || res.Rules[0].Content != "shared" || !res.Rules[0].AlwaysApply {
		t.Errorf("rules = %+v", res.Rules)
	}
	if got, want := pt.Warnings(res.Warnings), []string{"work/p/.cursor/rules/broken.mdc: symlink target does not exist; skipped"}; !reflect.DeepEqual(got, want) {
		t.Errorf("warnings = %q, want %q", got, want)
	}
}

func TestDiscoverUnreadableFile(t *testing.T) {
	fsys := pt.FailFS{FS: fstest.MapFS{
		"home/u/.cursor/rules/a.mdc": {Data: []byte("a")},
		"work/p/.cursor/rules/b.mdc": {Data: []byte("b")},
		"work/p/.cursor/rules/c.mdc": {Data: []byte("c")},
	}, Fail: []string{"work/p/.cursor/rules/b.mdc"}, Err: fs.ErrPermission}
	res := pt.Discover(t, New(), fsys)
	if got, want := pt.Rules(res.Rules), []string{"a user home/u/.cursor/rules/a.mdc", "c project work/p/.cursor/rules/c.mdc"}; !reflect.DeepEqual(got, want) {
		t.Errorf("rules = %q, want %q", got, want)
	}
	if got, want := pt.Warnings(res.Warnings), []string{"work/p/.cursor/rules/b.mdc: cannot read file: permission denied"}; !reflect.DeepEqual(got, want) {
		t.Errorf("warnings = %q, want %q", got, want)
	}
}

func TestDiscoverExtraDirs(t *testing.T) {
	fsys := fstest.MapFS{
		"work/p/.cursor/rules/a.mdc":         {Data: []byte("project a")},
		"work/p/pkg/.cursor/rules/n.mdc":     {Data: []byte("nested n")},
		"work/p/pkg/api/.cursor/rules/a.mdc": {Data: []byte("nested a")},
		"work/p/other/.cursor/rules/o.mdc":   {Data: []byte("not touched")},
	}
	for _, mode := range []plugin.Mode{plugin.ModeReference, plugin.ModeNative} {
		res, err := New().Discover(context.Background(), plugin.Request{Cwd: pt.Cwd, Home: pt.Home, WorkspaceRoot: pt.Cwd,
			Activation: mode, ExtraDirs: []string{"work/p/pkg", "work/p/pkg/api", "work/p/empty"}, FS: fsys})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"a project work/p/.cursor/rules/a.mdc",
			"n project work/p/pkg/.cursor/rules/n.mdc",
			"a project work/p/pkg/api/.cursor/rules/a.mdc",
		}
		var wantWarnings []string
		if mode == plugin.ModeNative {
			// Native mode keeps the first of a name within the provider.
			want = want[:2]
			wantWarnings = []string{`work/p/pkg/api/.cursor/rules/a.mdc: rule name "a" is already used by work/p/.cursor/rules/a.mdc; this file is not loaded (rename it to load both)`}
		}
		if got := pt.Rules(res.Rules); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: rules = %q\nwant %q", mode, got, want)
		}
		if got := pt.Warnings(res.Warnings); len(got)+len(wantWarnings) > 0 && !reflect.DeepEqual(got, wantWarnings) {
			t.Errorf("%s: warnings = %q, want %q", mode, got, wantWarnings)
		}
	}
}
