package windsurf

import (
	"io/fs"
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/rulebroker/rulebroker/plugin"
	pt "github.com/rulebroker/rulebroker/providers/internal/providertest"
)

const global = "home/u/.codeium/windsurf/memories/global_rules.md"

func TestInfo(t *testing.T) {
	want := plugin.Info{Name: "windsurf", Version: "0.1.0", Priority: 50}
	if got := New().Info(); !reflect.DeepEqual(got, want) {
		t.Errorf("Info = %+v, want %+v", got, want)
	}
}

func TestDiscoverPathsOrderAndLevels(t *testing.T) {
	fsys := fstest.MapFS{
		global: {Data: []byte("global")},
		"home/u/.codeium/windsurf/memories/other.md": {Data: []byte("not a rule")},
		"work/p/.windsurf/rules/b.md":                {Data: []byte("project b")},
		"work/p/.windsurf/rules/a.md":                {Data: []byte("project a")},
		"work/p/.windsurf/rules/c.mdc":               {Data: []byte("only .md here")},
		"work/p/.windsurf/rules/sub/d.md":            {Data: []byte("not searched")},
		"work/p/.windsurfrules":                      {Data: []byte("legacy, never read")},
		"home/u/.windsurf/rules/x.md":                {Data: []byte("no user rules dir")},
	}
	res := pt.Discover(t, New(), fsys)
	want := []string{
		"global_rules user " + global,
		"a project work/p/.windsurf/rules/a.md",
		"b project work/p/.windsurf/rules/b.md",
	}
	if got := pt.Rules(res.Rules); !reflect.DeepEqual(got, want) {
		t.Errorf("rules = %q\nwant    %q", got, want)
	}
	if res.Rules[0].Content != "global" {
		t.Errorf("global content = %q", res.Rules[0].Content)
	}
	wantWarnings := []string{"work/p/.windsurfrules: legacy .windsurfrules is not read; move its rules to .windsurf/rules/*.md"}
	if got := pt.Warnings(res.Warnings); !reflect.DeepEqual(got, wantWarnings) {
		t.Errorf("warnings = %q\nwant       %q", got, wantWarnings)
	}
}

func TestDiscoverNormalization(t *testing.T) {
	const file = "work/p/.windsurf/rules/r.md"
	tests := []struct {
		name     string
		data     string
		want     plugin.Rule
		warnings []string
	}{
		{
			name: "all fields",
			data: "---\ndescription: Style\nglobs: [\"*.go\", \"*.mod\"]\nalwaysApply: true\nttsr_trigger: panic\n---\nbody",
			want: plugin.Rule{Description: "Style", Globs: []string{"*.go", "*.mod"}, AlwaysApply: true, Condition: []string{"panic"}, Content: "body"},
		},
		{
			name: "globs single string",
			data: "---\nglobs: \"*.ts,*.{js,jsx}\"\n---\nbody",
			want: plugin.Rule{Globs: []string{"*.ts", "*.{js,jsx}"}, Content: "body"},
		},
		{
			name:     "wrong types dropped",
			data:     "---\ndescription: true\nalwaysApply: 1\nttsr_trigger: 5\nglobs: {a: b}\n---\nbody",
			want:     plugin.Rule{Content: "body"},
			warnings: []string{file + ": globs: a mapping is neither a string nor a list of strings; ignored", file + ": description: true is not a string; ignored", file + ": alwaysApply: 1 is not a boolean; ignored", file + ": ttsr_trigger: 5 is not a string; ignored"},
		},
		{
			name:     "Windsurf trigger reported",
			data:     "---\ntrigger: always_on\n---\nbody",
			want:     plugin.Rule{Content: "body"},
			warnings: []string{file + `: trigger: "always_on" is Windsurf's activation mode, which is not read; without description, alwaysApply or condition the rule is never offered to the model`},
		},
		{
			name: "CRLF and BOM",
			data: "\uFEFF---\r\nalwaysApply: true\r\n---\r\nbody\r\n",
			want: plugin.Rule{AlwaysApply: true, Content: "body"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pt.OneRule(t, New(), "work/p/.windsurf/rules/r.md", tt.data, tt.want, tt.warnings)
		})
	}
}

func TestDiscoverGlobalRulesFrontmatter(t *testing.T) {
	res := pt.Discover(t, New(), fstest.MapFS{global: {Data: []byte("---\ndescription: mine\n---\nglobal")}})
	want := plugin.Rule{Name: "global_rules", Path: global, Content: "global", Description: "mine", Level: plugin.LevelUser}
	if len(res.Rules) != 1 || !reflect.DeepEqual(res.Rules[0], want) {
		t.Errorf("rules = %+v, want %+v", res.Rules, want)
	}
}

func TestDiscoverMissing(t *testing.T) {
	res := pt.Discover(t, New(), fstest.MapFS{"home/u/.codeium/windsurf/mcp.json": {Data: []byte("{}")}})
	if len(res.Rules) != 0 || len(res.Warnings) != 0 {
		t.Errorf("got %+v", res)
	}
}

func TestDiscoverUnreadable(t *testing.T) {
	fsys := pt.FailFS{FS: fstest.MapFS{
		global:                        {Data: []byte("g")},
		"work/p/.windsurf/rules/a.md": {Data: []byte("a")},
		"work/p/.windsurf/rules/b.md": {Data: []byte("b")},
	}, Fail: []string{global, "work/p/.windsurf/rules/a.md"}, Err: fs.ErrPermission}
	res := pt.Discover(t, New(), fsys)
	if got, want := pt.Rules(res.Rules), []string{"b project work/p/.windsurf/rules/b.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("rules = %q, want %q", got, want)
	}
	want := []string{
		global + ": cannot read file: permission denied",
		"work/p/.windsurf/rules/a.md: cannot read file: permission denied",
	}
	if got := pt.Warnings(res.Warnings); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings = %q, want %q", got, want)
	}
}
