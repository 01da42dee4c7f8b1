package frontmatter

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rulebroker/rulebroker/internal/jstext"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		meta     map[string]any
		body     string
		has      bool
		fallback bool
		warn     []string // substrings, one per expected warning, in order
	}{
		{
			name: "no frontmatter: whole text is the body, trimmed",
			in:   "\n\n# Title\n\ntext\n\n",
			meta: map[string]any{},
			body: "# Title\n\ntext",
		},
		{
			name: "empty input",
			in:   "",
			meta: map[string]any{},
			body: "",
		},
		{
			name: "valid YAML frontmatter",
			in:   "---\ndescription: Go style\nglobs: [\"*.go\", \"go.mod\"]\nalwaysApply: false\n---\n\n# Body\n",
			meta: map[string]any{"description": "Go style", "globs": []any{"*.go", "go.mod"}, "alwaysApply": false},
			body: "# Body",
			has:  true,
		},
		{
			name: "a second YAML document inside the block is reported, not dropped silently",
			in:   "---\ndescription: first\n...\nalwaysApply: true\n---\nbody",
			meta: map[string]any{"description": "first"},
			body: "body",
			has:  true,
			warn: []string{"more than one YAML document"},
		},
		{
			name: "a second YAML document after a --- line that is not a fence",
			in:   "---\ndescription: first\n--- # second\nalwaysApply: true\n---\nbody",
			meta: map[string]any{"description": "first"},
			body: "body",
			has:  true,
			warn: []string{"more than one YAML document"},
		},
		{
			name: "a --- inside a block scalar is content, not a document",
			in:   "---\ndescription: |\n  ---x\n---\nbody",
			meta: map[string]any{"description": "---x\n"},
			body: "body",
			has:  true,
		},
		{
			name: "CRLF normalized",
			in:   "---\r\nalwaysApply: true\r\n---\r\nline one\r\nline two\r\n",
			meta: map[string]any{"alwaysApply": true},
			body: "line one\nline two",
			has:  true,
		},
		{
			name: "lone CR normalized",
			in:   "---\ralwaysApply: true\r---\rline one\rline two\r",
			meta: map[string]any{"alwaysApply": true},
			body: "line one\nline two",
			has:  true,
		},
		{
			name: "leading BOM ignored",
			in:   "\uFEFF---\ndescription: d\n---\nbody",
			meta: map[string]any{"description": "d"},
			body: "body",
			has:  true,
		},
		{
			name: "BOM without frontmatter",
			in:   "\uFEFF# Copilot Instructions\n",
			meta: map[string]any{},
			body: "# Copilot Instructions",
		},
		{
			name: "fences with trailing blanks",
			in:   "--- \t\ndescription: d\n---  \nbody",
			meta: map[string]any{"description": "d"},
			body: "body",
			has:  true,
		},
		{
			name: "---SOMETHING--- is not a fence",
			in:   "---CLINE_RULES_START---\nkey: value\n---CLINE_RULES_END---\n",
			meta: map[string]any{},
			body: "---CLINE_RULES_START---\nkey: value\n---CLINE_RULES_END---",
		},
		{
			name: "fence must be the first line",
			in:   "\n---\ndescription: d\n---\nbody",
			meta: map[string]any{},
			body: "---\ndescription: d\n---\nbody",
		},
		{
			name: "closing fence must be exactly ---",
			in:   "---\ndescription: d\n----\nbody\n--- x\n",
			meta: map[string]any{},
			body: "---\ndescription: d\n----\nbody\n--- x",
		},
		{
			name: "no closing fence: no frontmatter",
			in:   "---\ndescription: d\nbody",
			meta: map[string]any{},
			body: "---\ndescription: d\nbody",
		},
		{
			name: "only an opening fence",
			in:   "---",
			meta: map[string]any{},
			body: "---",
		},
		{
			name: "closing fence at end of input without newline",
			in:   "---\nalwaysApply: true\n---",
			meta: map[string]any{"alwaysApply": true},
			body: "",
			has:  true,
		},
		{
			name: "empty frontmatter block",
			in:   "---\n---\nbody",
			meta: map[string]any{},
			body: "body",
			has:  true,
		},
		{
			name: "comment-only frontmatter block",
			in:   "---\n# nothing\n---\nbody",
			meta: map[string]any{},
			body: "body",
			has:  true,
		},
		{
			name: "horizontal rule later in the body is kept",
			in:   "---\na: 1\n---\nintro\n---\nmore",
			meta: map[string]any{"a": 1},
			body: "intro\n---\nmore",
			has:  true,
		},
		{
			name:     "invalid YAML: unquoted comma globs use the line fallback",
			in:       "---\ndescription: TS rules\nglobs: *.ts,*.tsx\nalwaysApply: true\nthinking-level: high\nttsr_trigger: foo\n---\nbody",
			meta:     map[string]any{"description": "TS rules", "globs": "*.ts,*.tsx", "alwaysApply": true, "thinking-level": "high", "ttsr_trigger": "foo"},
			body:     "body",
			has:      true,
			fallback: true,
			warn:     []string{"invalid YAML frontmatter: yaml: "},
		},
		{
			name:     "fallback types scalars and keeps empty values as null",
			in:       "---\nglobs: *.md\ncount: 3\ndescription:\nlist: [a, b\nquoted: \"x\"\n  indented: no\n---\nbody",
			meta:     map[string]any{"globs": "*.md", "count": 3, "description": nil, "list": "[a, b", "quoted": "x"},
			body:     "body",
			has:      true,
			fallback: true,
			warn:     []string{"read with the line fallback"},
		},
		{
			name:     "fallback keeps a flow list as its raw string",
			in:       "---\nglobs: [a, b]\nbad: *x\n---\n",
			meta:     map[string]any{"globs": "[a, b]", "bad": "*x"},
			has:      true,
			fallback: true,
			warn:     []string{"invalid YAML frontmatter"},
		},
		{
			name:     "fallback: a later duplicate key wins",
			in:       "---\na: 1\na: 2\n---\n",
			meta:     map[string]any{"a": 2},
			has:      true,
			fallback: true,
			warn:     []string{"already defined"},
		},
		{
			name: "frontmatter that is a list",
			in:   "---\n- a\n- b\n---\nbody",
			meta: map[string]any{},
			body: "body",
			has:  true,
			warn: []string{"frontmatter is a list, not a mapping"},
		},
		{
			name: "frontmatter that is a scalar",
			in:   "---\njust text\n---\nbody",
			meta: map[string]any{},
			body: "body",
			has:  true,
			warn: []string{"frontmatter is a single value, not a mapping"},
		},
		{
			name: "non-string keys are formatted",
			in:   "---\n1: one\ntrue: yes\n---\n",
			meta: map[string]any{"1": "one", "true": "yes"},
			has:  true,
		},
		{
			name: "stacked frontmatter blocks: the first is read, the second is reported",
			in:   "---\ndescription:\nglobs:\n---\n---\ndescription: real\n---\nbody",
			meta: map[string]any{"description": nil, "globs": nil},
			body: "---\ndescription: real\n---\nbody",
			has:  true,
			warn: []string{"second frontmatter block"},
		},
		{
			name: "nested values survive",
			in:   "---\nextra:\n  k: v\n---\n",
			meta: map[string]any{"extra": map[string]any{"k": "v"}},
			has:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := Parse([]byte(tt.in))
			if !reflect.DeepEqual(doc.Meta, tt.meta) {
				t.Errorf("Meta = %#v, want %#v", doc.Meta, tt.meta)
			}
			if doc.Body != tt.body {
				t.Errorf("Body = %q, want %q", doc.Body, tt.body)
			}
			if doc.HasFrontmatter != tt.has {
				t.Errorf("HasFrontmatter = %v, want %v", doc.HasFrontmatter, tt.has)
			}
			if doc.Fallback != tt.fallback {
				t.Errorf("Fallback = %v, want %v", doc.Fallback, tt.fallback)
			}
			if len(doc.Warnings) != len(tt.warn) {
				t.Fatalf("Warnings = %q, want %d matching %q", doc.Warnings, len(tt.warn), tt.warn)
			}
			for i, w := range tt.warn {
				if !strings.Contains(doc.Warnings[i], w) {
					t.Errorf("Warnings[%d] = %q, want it to contain %q", i, doc.Warnings[i], w)
				}
			}
		})
	}
}

func TestParseWarningNamesYAMLMessage(t *testing.T) {
	doc := Parse([]byte("---\nglobs: *.ts,*.tsx\n---\n"))
	if len(doc.Warnings) != 1 {
		t.Fatalf("Warnings = %q, want one", doc.Warnings)
	}
	// YAML reads "*" as the start of an alias whose name ".ts,*.tsx" is invalid.
	if w := doc.Warnings[0]; !strings.Contains(w, "did not find expected alphabetic or numeric character") {
		t.Errorf("warning %q does not carry YAML's message", w)
	}
}

func TestNormalize(t *testing.T) {
	got := Normalize([]byte("\uFEFFa\r\nb\rc\n\r\n"))
	if want := "a\nb\nc\n\n"; got != want {
		t.Errorf("Normalize = %q, want %q", got, want)
	}
	// Only a leading BOM is a byte order mark.
	if got := Normalize([]byte("a\uFEFF")); got != "a\uFEFF" {
		t.Errorf("Normalize dropped an inner U+FEFF: %q", got)
	}
}

// TestBodyTrimIsJavaScripts checks the body is trimmed as
// String.prototype.trim trims: U+FEFF and U+2028 go, U+0085 (NEL, white
// space to Go's unicode.IsSpace but not to JavaScript) stays.
func TestBodyTrimIsJavaScripts(t *testing.T) {
	if got := Parse([]byte("\uFEFF \u00a0\t\nx y\n\u2028")).Body; got != "x y" {
		t.Errorf("body %q", got)
	}
	if got := Parse([]byte("---\na: 1\n---\n\u0085x\u0085\u3000")).Body; got != "\u0085x\u0085" {
		t.Errorf("body %q", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"",
		"---",
		"---\n---",
		"---\na: 1\n---\nbody",
		"\uFEFF---\r\nglobs: *.ts,*.tsx\r\n---\r\nbody\r\n",
		"---CLINE---\nx",
		"---\n- a\n---\n",
		"---\na: &x [*x]\n---\n",
		"---\nk: {a: [1, 2]}\n---\n---\nb: 2\n---\nz",
		"---\n\t\x00: \xff\n---\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc := Parse(data)
		norm := Normalize(data)
		if doc.Meta == nil {
			t.Fatal("Meta is nil")
		}
		if !strings.Contains(norm, doc.Body) {
			t.Fatalf("body %q is not part of the input %q", doc.Body, norm)
		}
		if doc.Body != jstext.Trim(doc.Body) {
			t.Fatalf("body %q is not trimmed", doc.Body)
		}
		if !doc.HasFrontmatter {
			if doc.Body != jstext.Trim(norm) {
				t.Fatalf("without frontmatter the body %q must be the whole input %q", doc.Body, jstext.Trim(norm))
			}
			if len(doc.Meta) != 0 || len(doc.Warnings) != 0 {
				t.Fatalf("without frontmatter: meta %v, warnings %q", doc.Meta, doc.Warnings)
			}
		} else if !strings.HasSuffix(jstext.Trim(norm), doc.Body) {
			// The body is everything after the closing fence.
			t.Fatalf("body %q is not the tail of the input %q", doc.Body, norm)
		}
		if doc.Fallback && len(doc.Warnings) == 0 {
			t.Fatal("fallback without a warning")
		}
	})
}

func TestParseWarningLineNumbersCountFromFileTop(t *testing.T) {
	doc := Parse([]byte("---\ndescription: ok\nglobs: *.md,*.mdx\n---\nbody"))
	// globs is on line 3 of the file (line 2 of the YAML block).
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "yaml: line 3: ") {
		t.Errorf("Warnings = %q, want YAML's message at line 3", doc.Warnings)
	}
	doc = Parse([]byte("---\na: 1\na: 2\n---\n"))
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "line 3: mapping key \"a\" already defined at line 2") {
		t.Errorf("Warnings = %q", doc.Warnings)
	}
}
