// Package frontmatter splits a rule file into its YAML frontmatter and its
// Markdown body: a block between "---" fences at the top of the file is
// YAML metadata, and when YAML rejects it, "key: value" lines are read one by
// one instead, so a slightly broken header still yields its fields. A few
// deliberate improvements that real files need are listed at Parse; the
// README's "Differences from the reference pipeline" explains each.
//
// Parse never fails and never panics: whatever the input, it returns a body
// and, when the frontmatter could not be read as written, warnings that say
// why. Callers attach the file path to the warnings.
package frontmatter

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/rulebroker/rulebroker/internal/jstext"
)

// MaxFrontmatterBytes caps the frontmatter block handed to YAML. Real
// frontmatter is a few lines; a block this large is a mistake or an attack,
// and YAML's cost grows with it. A larger block is not parsed: the file
// still loads with its body, and a warning names the cap.
const MaxFrontmatterBytes = 64 << 10

// Document is a parsed rule file.
type Document struct {
	// Meta holds the frontmatter keys. It is never nil; it is empty when the
	// file has no frontmatter or the block could not be read.
	Meta map[string]any
	// Body is the text after the frontmatter (or the whole text when there is
	// none), trimmed.
	Body string
	// HasFrontmatter reports that an opening and a closing fence were found,
	// whether or not the YAML between them was valid.
	HasFrontmatter bool
	// Fallback reports that YAML rejected the block and Meta came from the
	// line-by-line fallback.
	Fallback bool
	// Warnings describe what could not be read as written, for people.
	Warnings []string
}

// Normalize returns data as the parser sees it: a leading UTF-8 byte order
// mark dropped, CRLF and lone CR turned into LF. Editors on Windows and old
// Macs write such files, and a fence followed by "\r" would otherwise not be
// recognized.
func Normalize(data []byte) string {
	s := strings.TrimPrefix(string(data), "\uFEFF")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// Parse splits data into frontmatter and body.
//
// The reference reading (fenced YAML, else key: value lines), with these
// improvements:
//   - the input is normalized first (see Normalize);
//   - the opening fence is a first line that is exactly "---" (trailing
//     spaces and tabs allowed), so "---SOMETHING---" is ordinary text;
//   - the closing fence is the next line that is exactly "---" (trailing
//     blanks allowed); without one there is no frontmatter and the whole
//     text is the body;
//   - when YAML rejects the block, a warning carries YAML's message (its line
//     numbers counted from the top of the file) and the
//     line fallback accepts hyphens in keys and types each value as a YAML
//     scalar when it parses as one on its own (so "alwaysApply: true" stays
//     a boolean), else keeps the raw string;
//   - a block that is valid YAML but not a mapping yields a warning and empty
//     metadata;
//   - a block over MaxFrontmatterBytes is not parsed: a warning and empty
//     metadata, the body kept.
func Parse(data []byte) Document {
	text := Normalize(data)
	doc := Document{Meta: map[string]any{}}
	block, rest, ok := split(text)
	if !ok {
		doc.Body = jstext.Trim(text)
		return doc
	}
	doc.HasFrontmatter = true
	doc.Body = jstext.Trim(rest)
	if _, _, stacked := split(doc.Body); stacked {
		// Seen in the wild: a second block pasted under the first. Only the
		// first is metadata; say so rather than leave YAML in the body silently.
		doc.Warnings = append(doc.Warnings, "the body starts with a second frontmatter block; only the first is read as metadata")
	}
	if len(block) > MaxFrontmatterBytes {
		doc.Warnings = append(doc.Warnings, fmt.Sprintf(
			"frontmatter is %d bytes, over the %d KiB cap; its metadata is ignored", len(block), MaxFrontmatterBytes>>10))
		return doc
	}
	meta, warning, err := parseYAML(block)
	switch {
	case err != nil:
		doc.Fallback = true
		doc.Meta = parseLines(block)
		doc.Warnings = append(doc.Warnings,
			fmt.Sprintf("invalid YAML frontmatter: %s; read with the line fallback", yamlMessage(err)))
	default:
		if warning != "" {
			doc.Warnings = append(doc.Warnings, warning)
		}
		if meta != nil { // nil when the block is not a mapping
			doc.Meta = meta
		}
	}
	return doc
}

// split finds the fences. It returns the YAML between them and the text
// after the closing fence's line.
func split(text string) (block, rest string, ok bool) {
	first, after, found := strings.Cut(text, "\n")
	if !found || !isFence(first) {
		return "", "", false
	}
	end := 0 // the block is after[:end]
	for line := range strings.Lines(after) {
		if isFence(strings.TrimSuffix(line, "\n")) {
			return after[:end], after[end+len(line):], true
		}
		end += len(line)
	}
	return "", "", false
}

// isFence reports whether line is exactly "---", ignoring trailing blanks.
func isFence(line string) bool {
	return strings.TrimRight(line, " \t") == "---"
}

// parseYAML decodes a frontmatter block. A YAML error comes back as err; a
// block that is valid YAML but not a mapping comes back as a warning.
func parseYAML(block string) (meta map[string]any, warning string, err error) {
	if meta, ok := parseSimple(block); ok {
		return meta, "", nil
	}
	return parseFullYAML(block)
}

// parseFullYAML is parseYAML through yaml.v3, for any block.
func parseFullYAML(block string) (meta map[string]any, warning string, err error) {
	var node yaml.Node
	if err := safeUnmarshal(block, &node); err != nil {
		return nil, "", err
	}
	if node.Kind == 0 || len(node.Content) == 0 {
		return map[string]any{}, "", nil // empty block or only comments
	}
	top := node.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Sprintf("frontmatter is %s, not a mapping of keys to values; ignored", kindName(top)), nil
	}
	raw, err := decodeNode(top)
	if err != nil {
		return nil, "", err
	}
	if moreDocuments(block) {
		// YAML reads only the first document; say so rather than drop the
		// rest of the block silently.
		warning = `frontmatter holds more than one YAML document (a line starting with "---" or "..."); only the first is read`
	}
	return stringKeys(raw), warning, nil
}

// moreDocuments reports whether block holds a second YAML document after the
// first, which yaml.Unmarshal would ignore.
func moreDocuments(block string) (more bool) {
	marker := false
	for _, line := range strings.Split(block, "\n") {
		if strings.HasPrefix(line, "---") || strings.HasPrefix(line, "...") {
			marker = true
			break
		}
	}
	if !marker {
		return false
	}
	defer func() {
		if recover() != nil {
			more = false
		}
	}()
	dec := yaml.NewDecoder(strings.NewReader(block))
	var first, second yaml.Node
	if dec.Decode(&first) != nil {
		return false
	}
	// Anything after the first document counts: another document, or text
	// YAML cannot read at all (which Unmarshal would also have ignored).
	err := dec.Decode(&second)
	return err == nil && len(second.Content) > 0 || err != nil && !errors.Is(err, io.EOF)
}

// kindName describes a YAML node for a warning.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return "a single value"
	case yaml.AliasNode:
		return "an alias"
	default:
		return "not a mapping"
	}
}

// stringKeys turns a decoded mapping into map[string]any. yaml.v3 produces
// map[any]any when a key is not a string (e.g. "1: x"); such keys are
// formatted rather than lost.
func stringKeys(v any) map[string]any {
	switch m := v.(type) {
	case map[string]any:
		return m
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, val := range m {
			out[fmt.Sprint(k)] = val
		}
		return out
	}
	return map[string]any{}
}

// linePattern is the reference's "key: value" fallback for a block YAML
// rejects, widened to accept hyphenated keys such as "thinking-level".
var linePattern = regexp.MustCompile(`^([\w-]+):\s*(.*)$`)

// parseLines is the fallback for a block YAML rejects: every "key: value"
// line becomes one entry; other lines are ignored. A later duplicate key wins,
// as in the reference.
func parseLines(block string) map[string]any {
	meta := map[string]any{}
	for line := range strings.Lines(block) {
		m := linePattern.FindStringSubmatch(strings.TrimSuffix(line, "\n"))
		if m == nil {
			continue
		}
		meta[m[1]] = scalar(strings.TrimRight(m[2], " \t"))
	}
	return meta
}

// scalar types a fallback value as YAML would type it on its own ("true" →
// true, "3" → 3, "" → nil), keeping the raw string when it is not a valid
// YAML scalar ("*.ts,*.tsx" is an alias to YAML, and invalid).
func scalar(raw string) any {
	var node yaml.Node
	if err := safeUnmarshal(raw, &node); err != nil {
		return raw
	}
	if node.Kind == 0 || len(node.Content) == 0 {
		return nil
	}
	top := node.Content[0]
	if top.Kind != yaml.ScalarNode {
		return raw
	}
	var v any
	if err := safeDecode(top, &v); err != nil {
		return raw
	}
	return v
}

// yamlLine matches the line numbers in YAML's messages.
var yamlLine = regexp.MustCompile(`\bline (\d+)\b`)

// yamlMessage returns YAML's own message, with its line numbers shifted to
// count from the top of the file (YAML counts from the line after the
// opening fence), so a user can go straight to the line.
func yamlMessage(err error) string {
	msg := err.Error()
	if te, ok := err.(*yaml.TypeError); ok {
		msg = "yaml: " + strings.Join(te.Errors, "; ")
	}
	return yamlLine.ReplaceAllStringFunc(msg, func(m string) string {
		n, err := strconv.Atoi(strings.TrimPrefix(m, "line "))
		if err != nil {
			return m
		}
		return "line " + strconv.Itoa(n+1)
	})
}

// safeUnmarshal is yaml.Unmarshal that turns a panic inside the YAML library
// into an error: whatever a rule file holds, parsing must not crash the
// provider.
func safeUnmarshal(s string, out *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: internal error: %v", r)
		}
	}()
	return yaml.Unmarshal([]byte(s), out)
}

// safeDecode is Node.Decode with the same panic guard as safeUnmarshal.
func safeDecode(n *yaml.Node, out *any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: internal error: %v", r)
		}
	}()
	return n.Decode(out)
}
