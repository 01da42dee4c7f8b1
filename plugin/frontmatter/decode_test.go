package frontmatter

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// decodeCases exercise every branch of the converter; each must give what
// yaml.v3's own Node.Decode gives.
var decodeCases = []string{
	"a: 1",
	"a: 1\nb: [x, 2, true, null, 1.5, ~]\nc: {d: e}",
	"1: x\ntrue: y\nnull: z",
	"'1': quoted\n\"x\": y",
	"a: !!str 3\nb: !!binary aGVsbG8=\nc: !!float 1",
	"t: 2001-12-14t21:59:43.10-05:00",
	"base: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  y: 3",
	"a: &a {k: 1}\nb: &b {k: 2, l: 2}\nc:\n  <<: [*a, *b]\n  m: 3",
	"a: &a {k: 1, <<: {z: 9}}\nc: {<<: *a}",
	"a: &x [1, 2]\nb: *x\nc: [*x, *x]",
	"? [1, 2]\n: x",
	"a: 1\na: 2",
	"a: 1\nb: {c: 1, c: 2}\na: 3",
	"<<: {a: 1}\n<<: {b: 2}",
	"a: &x {b: *x}",
	"a: {<<: [1]}",
	"a: .nan\n.nan: x",
	"~: a",
	"k: |\n  text\n  more\nl: >\n  folded",
	"a: {b: {c: {d: [1, {e: f}]}}}",
}

func TestDecodeNodeMatchesYAML(t *testing.T) {
	for _, src := range decodeCases {
		sameAsYAML(t, src)
	}
}

// sameAsYAML checks that decodeNode agrees with Node.Decode on src: both
// fail, or both give deeply equal values.
func sameAsYAML(t *testing.T, src string) {
	t.Helper()
	var doc yaml.Node
	if safeUnmarshal(src, &doc) != nil || len(doc.Content) == 0 {
		return
	}
	top := doc.Content[0]
	var want any
	wantErr := safeDecode(top, &want)
	got, gotErr := decodeNode(top)
	if (wantErr != nil) != (gotErr != nil) {
		t.Fatalf("%q: yaml.v3 error %v, ours %v", src, wantErr, gotErr)
	}
	if wantErr == nil && !reflect.DeepEqual(nanFree(got), nanFree(want)) {
		t.Fatalf("%q:\n ours %#v\n yaml %#v", src, got, want)
	}
}

// nanFree renders a value for comparison: NaN is never equal to itself.
func nanFree(v any) string { return fmt.Sprintf("%#v", v) }

func TestDuplicateKeysReportedOnceEach(t *testing.T) {
	var b strings.Builder
	for range 1000 {
		b.WriteString("a: 1\n")
	}
	doc := Parse([]byte("---\n" + b.String() + "---\nbody"))
	if !doc.Fallback || len(doc.Warnings) != 1 || doc.Body != "body" {
		t.Fatalf("%+v", doc)
	}
	if n := strings.Count(doc.Warnings[0], "already defined"); n != maxDuplicateMessages {
		t.Errorf("%d duplicate messages, want %d", n, maxDuplicateMessages)
	}
	if !strings.Contains(doc.Warnings[0], "and 989 more duplicate keys") {
		t.Errorf("warning %q does not count the rest", doc.Warnings[0])
	}
}

func TestAliasBombRefused(t *testing.T) {
	src := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 'b'; i <= 'j'; i++ {
		src += fmt.Sprintf("%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	doc := Parse([]byte("---\n" + src + "---\nbody"))
	if !doc.Fallback || len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "excessive aliasing") {
		t.Fatalf("%+v", doc.Warnings)
	}
}

func TestFrontmatterOverCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("---\ndescription: big\n")
	for i := 0; b.Len() < 100<<10; i++ {
		fmt.Fprintf(&b, "key%d: value\n", i)
	}
	b.WriteString("---\nthe body\n")
	doc := Parse([]byte(b.String()))
	if doc.Body != "the body" || !doc.HasFrontmatter || len(doc.Meta) != 0 || doc.Fallback {
		t.Fatalf("body %q, has %v, meta %d keys, fallback %v", doc.Body, doc.HasFrontmatter, len(doc.Meta), doc.Fallback)
	}
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "over the 64 KiB cap; its metadata is ignored") ||
		!strings.HasPrefix(doc.Warnings[0], "frontmatter is 10") {
		t.Fatalf("warnings %q", doc.Warnings)
	}
	// Exactly at the cap is still read.
	block := "a: " + strings.Repeat("x", MaxFrontmatterBytes-4) + "\n"
	if doc := Parse([]byte("---\n" + block + "---\nb")); len(doc.Meta) != 1 || len(doc.Warnings) != 0 {
		t.Fatalf("at the cap: %d keys, %q", len(doc.Meta), doc.Warnings)
	}
}

func FuzzDecodeNode(f *testing.F) {
	for _, c := range decodeCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return // yaml.v3's own decode is quadratic; keep the oracle fast
		}
		sameAsYAML(t, src)
	})
}

// worstCases are 64 KiB frontmatter blocks of each shape that stresses a
// YAML reader: many keys, deep nesting, long flow sequences, many aliases.
func worstCases() map[string]string {
	const size = MaxFrontmatterBytes
	fill := func(head, unit, tail string) string {
		var b strings.Builder
		b.WriteString(head)
		for i := 0; b.Len()+len(unit)+len(tail)+8 < size; i++ {
			b.WriteString(strings.ReplaceAll(unit, "#", fmt.Sprint(i)))
		}
		b.WriteString(tail)
		return b.String()
	}
	nested := func(open, close string) string {
		depth := (size - 16) / (len(open) + len(close))
		return "a: " + strings.Repeat(open, depth) + "1" + strings.Repeat(close, depth) + "\n"
	}
	return map[string]string{
		"keys":          fill("", "k#: v\n", ""),
		"dupkeys":       fill("", "k: v\n", ""),
		"nested-block":  nestedBlock(size),
		"nested-flow":   nested("{a: ", "}"),
		"nested-seq":    nested("[", "]"),
		"flow-seq":      fill("a: [", "#, ", "0]\n"),
		"flow-map":      fill("a: {", "k#: v, ", "z: 0}\n"),
		"aliases":       fill("base: &b {x: 1, y: 2}\n", "k#: *b\n", ""),
		"merges":        fill("base: &b {x: 1, y: 2}\n", "k#: {<<: *b, z: 3}\n", ""),
		"fallback":      fill("bad: [\n", "k#: *.ts,*.tsx\n", ""),
		"fallback-keys": fill("globs: *.ts\n", "k#: v\n", ""),
	}
}

// nestedBlock nests block mappings as deep as 64 KiB of indentation allows.
func nestedBlock(size int) string {
	var b strings.Builder
	for d := 0; ; d++ {
		line := strings.Repeat(" ", d) + "a:\n"
		if b.Len()+len(line)+d+8 > size {
			b.WriteString(strings.Repeat(" ", d) + "b: 1\n")
			return b.String()
		}
		b.WriteString(line)
	}
}

func BenchmarkParse64KiB(b *testing.B) {
	for name, block := range worstCases() {
		data := []byte("---\n" + block + "---\nbody\n")
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				Parse(data)
			}
		})
	}
}
