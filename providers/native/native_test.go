package native

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
	want := plugin.Info{Name: "native", Version: "0.1.0", Priority: 100}
	if got := New().Info(); !reflect.DeepEqual(got, want) {
		t.Errorf("Info = %+v, want %+v", got, want)
	}
}

func TestDiscoverPathsOrderAndLevels(t *testing.T) {
	fsys := fstest.MapFS{
		"work/p/.xcsh/rules/b.mdc":          {Data: []byte("project b")},
		"work/p/.xcsh/rules/a.md":           {Data: []byte("project a")},
		"work/p/.xcsh/rules/notes.txt":      {Data: []byte("not a rule")},
		"work/p/.xcsh/rules/sub/c.md":       {Data: []byte("not searched")},
		"home/u/.xcsh/agent/rules/a.md":     {Data: []byte("user a")},
		"home/u/.xcsh/agent/rules/z.mdc":    {Data: []byte("user z")},
		"home/u/.xcsh/rules/ignored.md":     {Data: []byte("wrong user dir")},
		"work/p/.xcsh/agent/rules/nope.md":  {Data: []byte("wrong project dir")},
		"work/p/.cursor/rules/other.mdc":    {Data: []byte("cursor's")},
		"home/u/.xcsh/agent/rules/x.md.bak": {Data: []byte("backup")},
	}
	res := pt.Discover(t, New(), fsys)
	want := []string{
		"a project work/p/.xcsh/rules/a.md",
		"b project work/p/.xcsh/rules/b.mdc",
		"a user home/u/.xcsh/agent/rules/a.md",
		"z user home/u/.xcsh/agent/rules/z.mdc",
	}
	if got := pt.Rules(res.Rules); !reflect.DeepEqual(got, want) {
		t.Errorf("rules = %q\nwant    %q", got, want)
	}
	if res.Rules[0].Content != "project a" || res.Rules[2].Content != "user a" {
		t.Errorf("contents: %q, %q", res.Rules[0].Content, res.Rules[2].Content)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings = %q", pt.Warnings(res.Warnings))
	}
}

func TestDiscoverNormalization(t *testing.T) {
	tests := []struct {
		name     string
		data     string
		want     plugin.Rule
		warnings []string
	}{
		{
			name: "fields mapped",
			data: "---\ndescription: Style\nglobs: [\"*.go\", \"*.mod\"]\nalwaysApply: true\n---\nbody\n",
			want: plugin.Rule{Description: "Style", Globs: []string{"*.go", "*.mod"}, AlwaysApply: true, Content: "body"},
		},
		{
			name: "globs string split outside braces",
			data: "---\nglobs: \"*.{ts,tsx}, src/**\"\n---\nbody",
			want: plugin.Rule{Globs: []string{"*.{ts,tsx}", "src/**"}, Content: "body"},
		},
		{
			name:     "non-string globs elements dropped with a warning",
			data:     "---\nglobs: [\"*.go\", 7]\n---\nbody",
			want:     plugin.Rule{Globs: []string{"*.go"}, Content: "body"},
			warnings: []string{"work/p/.xcsh/rules/r.md: globs: element 2 (7) is not a string; dropped"},
		},
		{
			name: "condition",
			data: "---\ncondition: [\"TODO\", \"(?i)fixme\"]\n---\nbody",
			want: plugin.Rule{Condition: []string{"TODO", "(?i)fixme"}, Content: "body"},
		},
		{
			name: "ttsr_trigger",
			data: "---\nttsr_trigger: rm -rf\n---\nbody",
			want: plugin.Rule{Condition: []string{"rm -rf"}, Content: "body"},
		},
		{
			name: "ttsrTrigger",
			data: "---\nttsrTrigger: eval\\(\n---\nbody",
			want: plugin.Rule{Condition: []string{`eval\(`}, Content: "body"},
		},
		{
			name:     "wrong types",
			data:     "---\nalwaysApply: \"yes\"\ndescription: [a]\n---\nbody",
			want:     plugin.Rule{Content: "body"},
			warnings: []string{`work/p/.xcsh/rules/r.md: description: a list is not a string; ignored`, `work/p/.xcsh/rules/r.md: alwaysApply: "yes" is not a boolean; ignored`},
		},
		{
			name:     "invalid YAML: line fallback",
			data:     "---\nglobs: *.ts,*.tsx\nalwaysApply: true\ndescription: TS\n---\nbody",
			want:     plugin.Rule{Globs: []string{"*.ts", "*.tsx"}, AlwaysApply: true, Description: "TS", Content: "body"},
			warnings: []string{"work/p/.xcsh/rules/r.md: invalid YAML frontmatter: yaml: did not find expected alphabetic or numeric character; read with the line fallback"},
		},
		{
			name: "no frontmatter",
			data: "# Rule\n",
			want: plugin.Rule{Content: "# Rule"},
		},
		{
			name:     "empty file",
			data:     "",
			want:     plugin.Rule{},
			warnings: []string{"work/p/.xcsh/rules/r.md: empty rule file"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pt.OneRule(t, New(), "work/p/.xcsh/rules/r.md", tt.data, tt.want, tt.warnings)
		})
	}
}

func TestDiscoverMissingDirs(t *testing.T) {
	res := pt.Discover(t, New(), fstest.MapFS{"work/p/README.md": {Data: []byte("x")}})
	if len(res.Rules) != 0 || len(res.Warnings) != 0 {
		t.Errorf("got %+v", res)
	}
}

func TestDiscoverUnreadableFile(t *testing.T) {
	fsys := pt.FailFS{FS: fstest.MapFS{
		"work/p/.xcsh/rules/a.md":       {Data: []byte("a")},
		"work/p/.xcsh/rules/b.md":       {Data: []byte("b")},
		"home/u/.xcsh/agent/rules/c.md": {Data: []byte("c")},
	}, Fail: []string{"work/p/.xcsh/rules/a.md"}, Err: fs.ErrPermission}
	res := pt.Discover(t, New(), fsys)
	if got, want := pt.Rules(res.Rules), []string{"b project work/p/.xcsh/rules/b.md", "c user home/u/.xcsh/agent/rules/c.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("rules = %q, want %q", got, want)
	}
	if got, want := pt.Warnings(res.Warnings), []string{"work/p/.xcsh/rules/a.md: cannot read file: permission denied"}; !reflect.DeepEqual(got, want) {
		t.Errorf("warnings = %q, want %q", got, want)
	}
}

func TestDiscoverNoHome(t *testing.T) {
	fsys := fstest.MapFS{".xcsh/agent/rules/a.md": {Data: []byte("a")}}
	res, err := New().Discover(context.Background(), plugin.Request{Cwd: "work/p", FS: fsys})
	if err != nil || len(res.Rules) != 0 {
		t.Errorf("without a home: %+v, %v", res, err)
	}
}

func TestDiscoverCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New().Discover(ctx, plugin.Request{Cwd: "work/p", Home: "home/u", FS: fstest.MapFS{}}); err == nil {
		t.Error("Discover ignored a cancelled context")
	}
}
