package plugin

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitGlobs(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"*.ts", []string{"*.ts"}},
		{"*.ts,*.tsx", []string{"*.ts", "*.tsx"}},
		{" *.ts , *.tsx ,", []string{"*.ts", "*.tsx"}},
		{"*.{ts,tsx}", []string{"*.{ts,tsx}"}},
		{"src/**/*.{ts,tsx},docs/{a,{b,c}}/*.md", []string{"src/**/*.{ts,tsx}", "docs/{a,{b,c}}/*.md"}},
		{"a},b", []string{"a}", "b"}},
		{"{a,b", []string{"{a,b"}},
		{",,", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if got := splitGlobs(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitGlobs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFieldsGlobs(t *testing.T) {
	tests := []struct {
		name     string
		value    any
		want     []string
		problems []string
	}{
		{"absent", nil, nil, nil},
		{"one string", "*.go", []string{"*.go"}, nil},
		{"comma string", "*.ts, *.tsx", []string{"*.ts", "*.tsx"}, nil},
		{"brace string", "*.{ts,tsx}", []string{"*.{ts,tsx}"}, nil},
		{"list", []any{"*.go", " go.mod ", ""}, []string{"*.go", "go.mod"}, nil},
		{"list elements are not split", []any{"a,b"}, []string{"a,b"}, nil},
		{"non-string elements dropped", []any{"*.go", 42, map[string]any{"k": "v"}, "*.md"}, []string{"*.go", "*.md"},
			[]string{"globs: element 2 (42) is not a string; dropped", "globs: element 3 (a mapping) is not a string; dropped"}},
		{"number", 3, nil, []string{"globs: 3 is neither a string nor a list of strings; ignored"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta := map[string]any{}
			if tt.value != nil {
				meta["globs"] = tt.value
			}
			f := newFields(meta)
			if got := f.Globs("globs"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Globs = %q, want %q", got, tt.want)
			}
			if !reflect.DeepEqual(f.Problems, tt.problems) {
				t.Errorf("Problems = %q, want %q", f.Problems, tt.problems)
			}
		})
	}
}

func TestFieldsTyped(t *testing.T) {
	f := newFields(map[string]any{
		"s": "text", "n": 3, "b": true, "f": false, "bs": "yes", "null": nil,
		"long": strings.Repeat("x", 100),
	})
	if s, ok := f.String("s"); !ok || s != "text" {
		t.Errorf("String(s) = %q, %v", s, ok)
	}
	if _, ok := f.String("n"); ok {
		t.Error("String(n) accepted a number")
	}
	if _, ok := f.String("null"); ok {
		t.Error("String(null) accepted null")
	}
	if _, ok := f.String("absent"); ok {
		t.Error("String(absent) found something")
	}
	if b, ok := f.Bool("b"); !ok || !b {
		t.Errorf("Bool(b) = %v, %v", b, ok)
	}
	if b, ok := f.Bool("f"); !ok || b {
		t.Errorf("Bool(f) = %v, %v", b, ok)
	}
	if _, ok := f.Bool("bs"); ok {
		t.Error(`Bool accepted the string "yes"`)
	}
	if _, ok := f.Bool("long"); ok {
		t.Error("Bool accepted a string")
	}
	want := []string{
		"n: 3 is not a string; ignored",
		`bs: "yes" is not a boolean; ignored`,
		`long: "` + strings.Repeat("x", 59) + "… is not a boolean; ignored",
	}
	if !reflect.DeepEqual(f.Problems, want) {
		t.Errorf("Problems = %q, want %q", f.Problems, want)
	}
}

func TestFieldsStringList(t *testing.T) {
	f := newFields(map[string]any{"one": "a,b", "list": []any{"x", true, "y"}, "map": map[string]any{}})
	if got := f.StringList("one"); !reflect.DeepEqual(got, []string{"a,b"}) {
		t.Errorf("StringList(one) = %q", got)
	}
	if got := f.StringList("list"); !reflect.DeepEqual(got, []string{"x", "y"}) {
		t.Errorf("StringList(list) = %q", got)
	}
	if got := f.StringList("map"); got != nil {
		t.Errorf("StringList(map) = %q", got)
	}
	if len(f.Problems) != 2 {
		t.Errorf("Problems = %q, want 2", f.Problems)
	}
}

func TestFieldsConditions(t *testing.T) {
	tests := []struct {
		name     string
		meta     map[string]any
		want     []string
		problems int
	}{
		{"none", map[string]any{}, nil, 0},
		{"condition string", map[string]any{"condition": "foo", "ttsr_trigger": "bar"}, []string{"foo"}, 0},
		{"condition list", map[string]any{"condition": []any{"a", "b"}}, []string{"a", "b"}, 0},
		{"ttsr_trigger", map[string]any{"ttsr_trigger": "bar", "ttsrTrigger": "baz"}, []string{"bar"}, 0},
		{"ttsrTrigger", map[string]any{"ttsrTrigger": "baz"}, []string{"baz"}, 0},
		{"ttsr_trigger must be a string", map[string]any{"ttsr_trigger": []any{"x"}, "ttsrTrigger": "baz"}, []string{"baz"}, 1},
		{"bad condition falls through", map[string]any{"condition": 3, "ttsr_trigger": "bar"}, []string{"bar"}, 1},
		{"empty condition falls through", map[string]any{"condition": " ", "ttsr_trigger": ""}, nil, 0},
		{"null condition", map[string]any{"condition": nil}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFields(tt.meta)
			if got := f.Conditions(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Conditions = %q, want %q", got, tt.want)
			}
			if len(f.Problems) != tt.problems {
				t.Errorf("Problems = %q, want %d", f.Problems, tt.problems)
			}
		})
	}
}

func TestParseRule(t *testing.T) {
	tests := []struct {
		name     string
		data     string
		want     Rule
		warnings []string
	}{
		{
			name: "all fields",
			data: "---\ndescription: Go style\nglobs: \"*.go, go.mod\"\nalwaysApply: true\ncondition: panic\\(\n---\n# Go\n",
			want: Rule{Description: "Go style", Globs: []string{"*.go", "go.mod"}, AlwaysApply: true, Condition: []string{`panic\(`}, Content: "# Go"},
		},
		{
			name: "no frontmatter",
			data: "just text\n",
			want: Rule{Content: "just text"},
		},
		{
			name:     "invalid YAML keeps typed fallback values",
			data:     "---\nglobs: *.ts,*.tsx\nalwaysApply: true\n---\nbody",
			want:     Rule{Globs: []string{"*.ts", "*.tsx"}, AlwaysApply: true, Content: "body"},
			warnings: []string{"invalid YAML frontmatter: yaml: did not find expected alphabetic or numeric character; read with the line fallback"},
		},
		{
			name:     "wrong types dropped with warnings",
			data:     "---\ndescription: 42\nalwaysApply: \"yes\"\nglobs: [a, 1]\n---\nbody",
			want:     Rule{Globs: []string{"a"}, Content: "body"},
			warnings: []string{"globs: element 2 (1) is not a string; dropped", "description: 42 is not a string; ignored", `alwaysApply: "yes" is not a boolean; ignored`},
		},
		{
			name:     "empty file still a rule",
			data:     " \n",
			want:     Rule{},
			warnings: []string{"empty rule file"},
		},
		{
			name:     "frontmatter without content",
			data:     "---\nalwaysApply: true\n---\n",
			want:     Rule{AlwaysApply: true},
			warnings: []string{"rule has frontmatter but no content"},
		},
		{
			name:     "Windsurf trigger is reported",
			data:     "---\ntrigger: always_on\n---\nbody",
			want:     Rule{Content: "body"},
			warnings: []string{`trigger: "always_on" is Windsurf's activation mode, which is not read; without description, alwaysApply or condition the rule is never offered to the model`},
		},
		{
			name:     "an empty Windsurf trigger reads as empty",
			data:     "---\ntrigger:\ndescription: d\n---\nbody",
			want:     Rule{Content: "body", Description: "d"},
			warnings: []string{`trigger: (empty) is Windsurf's activation mode, which is not read`},
		},
		{
			name:     "frontmatter that is not a mapping",
			data:     "---\n- a\n---\nbody",
			want:     Rule{Content: "body"},
			warnings: []string{"frontmatter is a list, not a mapping of keys to values; ignored"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := File{Path: "/p/.cursor/rules/r.mdc", Name: "r", Data: []byte(tt.data)}
			got, warnings := ParseRule(f, LevelProject)
			tt.want.Name, tt.want.Path, tt.want.Level = "r", f.Path, LevelProject
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("rule = %+v\nwant   %+v", got, tt.want)
			}
			var msgs []string
			for _, w := range warnings {
				if w.Path != f.Path {
					t.Errorf("warning %v does not name the file", w)
				}
				msgs = append(msgs, w.Message)
			}
			if !reflect.DeepEqual(msgs, tt.warnings) {
				t.Errorf("warnings = %q\nwant       %q", msgs, tt.warnings)
			}
		})
	}
}
