package frontmatter

import (
	"reflect"
	"testing"
)

// simpleSeeds are blocks on both sides of the line parseSimple draws.
var simpleSeeds = []string{
	"",
	"\n\n",
	"description: Use the repository's style\nalwaysApply: false\nglobs:\n",
	"description: A, b; c (d) - e/f 'g' \"h\" *i &j !k |l >m %n @o `p ?q\n",
	"alwaysApply: true\nthinking-level: high\n_private: x\n",
	"description: 中文描述，按规则执行\n",
	"description: café\u00a0crème\n",
	"globs: \"*_test.go\"\ndescription: 'It''s: #1'\nempty: ''\nq: \"\"\n",
	"key: yes\nother: no\nthird: on\n",
	"globs: src/**/*.ts\n",
	"globs: *.ts,*.tsx\n",
	"description: http://example.com\n",
	"description: a # comment\n",
	"description: trailing \n",
	"description:no-space\n",
	"description:    spaced\n",
	"key: 1\n", "key: 0x1f\n", "key: 2001-12-14\n", "key: .inf\n", "key: ~\n",
	"key: null\nnull: key\n", "True: x\n", "key: TRUE\n", "key: True\n",
	"key: 'quoted'\n", "key: \"quoted\"\n", "key: \"a\\nb\"\n", "key: 'a'b'\n", "key: \"a\"b\"\n", "key: 'a' \n", "key: \"a\tb\"\n", "key: 'a\n", "key: [a, b]\n", "key: {a: b}\n",
	"key: a\nkey: b\n",
	"key:\n  - a\n  - b\n",
	"# comment\nkey: a\n",
	"key: a\u2028b\n", "key: a\u0085b\n", "key: a\ufeffb\n", "key: a\tb\n", "key: a\\b\n",
	"list: a\n...\n",
	"1key: a\n", "-key: a\n", "ke y: a\n",
	"key: a: b\n",
	"key: ab\xffcd\n",
}

// TestSimpleFrontmatterIsYAML checks that whatever parseSimple reads, it
// reads as YAML does.
func TestSimpleFrontmatterIsYAML(t *testing.T) {
	read := 0
	for _, block := range simpleSeeds {
		if simpleMatchesYAML(t, block) {
			read++
		}
	}
	// The common shapes are read without YAML.
	for _, block := range simpleSeeds[:9] {
		if _, ok := parseSimple(block); !ok {
			t.Errorf("parseSimple declined the simple block %q", block)
		}
	}
	if read == len(simpleSeeds) {
		t.Error("parseSimple read every seed, the ones YAML reads otherwise too")
	}
}

// simpleMatchesYAML fails t when parseSimple reads block otherwise than YAML, and
// reports whether it read it.
func simpleMatchesYAML(t *testing.T, block string) bool {
	t.Helper()
	got, ok := parseSimple(block)
	if !ok {
		return false
	}
	want, warning, err := parseFullYAML(block)
	if err != nil || warning != "" || !reflect.DeepEqual(got, want) {
		t.Fatalf("block %q: parseSimple read %#v; YAML reads %#v (warning %q, err %v)", block, got, want, warning, err)
	}
	return true
}

func FuzzSimpleFrontmatterIsYAML(f *testing.F) {
	for _, s := range simpleSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, block string) {
		if len(block) > MaxFrontmatterBytes {
			return
		}
		simpleMatchesYAML(t, block)
	})
}

// FuzzSimpleLineIsYAML mutates one "key: value" line, the shape parseSimple
// reads, so the fuzzer spends its time near the line it draws.
func FuzzSimpleLineIsYAML(f *testing.F) {
	f.Add("description", "Use tabs")
	f.Add("alwaysApply", "true")
	f.Add("globs", "src/**/*.ts, lib/*.js")
	f.Add("key", "中文")
	f.Add("globs", `"*_test.go"`)
	f.Add("description", `'It''s: #1'`)
	f.Fuzz(func(t *testing.T, key, value string) {
		simpleMatchesYAML(t, key+": "+value+"\n")
	})
}

// Parse reads a plain block without YAML: a fraction of the allocations
// yaml.v3 makes for the same three lines, which it takes once the block
// needs it (here, a comment line).
func TestParseReadsAPlainBlockWithoutYAML(t *testing.T) {
	plain := []byte("---\ndescription: Use tabs\nalwaysApply: true\nglobs: \"*.go\"\n---\nBody.\n")
	commented := []byte("---\n# a comment\ndescription: Use tabs\nalwaysApply: true\nglobs: \"*.go\"\n---\nBody.\n")
	if a, b := Parse(plain), Parse(commented); !reflect.DeepEqual(a.Meta, b.Meta) {
		t.Fatalf("the two blocks read differently: %v, %v", a.Meta, b.Meta)
	}
	direct := testing.AllocsPerRun(20, func() { Parse(plain) })
	yaml := testing.AllocsPerRun(20, func() { Parse(commented) })
	if direct*4 > yaml {
		t.Fatalf("a plain block took %.0f allocations, one YAML reads %.0f: it went through YAML", direct, yaml)
	}
}
