package plugin

import (
	"fmt"
	"slices"
	"strings"
)

// fields reads typed values out of frontmatter metadata. A value of the wrong
// type is dropped and described in Problems (e.g. `alwaysApply: "yes" is not
// a boolean; ignored`), so a provider can turn bad input into a warning
// instead of silently losing it. A key that is absent or null (`description:`
// with nothing after it) is simply absent.
type fields struct {
	Meta     map[string]any
	Problems []string
}

// NewFields wraps meta for typed reads.
func newFields(meta map[string]any) *fields { return &fields{Meta: meta} }

func (f *fields) problem(format string, args ...any) {
	f.Problems = append(f.Problems, fmt.Sprintf(format, args...))
}

// String returns the value of key when it is a string.
func (f *fields) String(key string) (string, bool) {
	v, ok := f.Meta[key]
	if !ok || v == nil {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		f.problem("%s: %s is not a string; ignored", key, show(v))
	}
	return s, ok
}

// Bool returns the value of key when it is a real boolean. The string "true"
// is not one: YAML would have typed it had it not been quoted.
func (f *fields) Bool(key string) (bool, bool) {
	v, ok := f.Meta[key]
	if !ok || v == nil {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		f.problem("%s: %s is not a boolean; ignored", key, show(v))
	}
	return b, ok
}

// StringList returns the value of key as a list of strings: a list keeps its
// string elements (others are dropped, each a problem); a single string is a
// one-element list. Elements are trimmed; empty ones are dropped.
func (f *fields) StringList(key string) []string {
	return f.list(key, func(s string) []string { return []string{s} })
}

// Globs returns the glob patterns under key: a list keeps its string
// elements; a single string is split on the commas that are not inside
// braces, so "*.ts, *.tsx" is two globs and "*.{ts,tsx}" is one.
func (f *fields) Globs(key string) []string {
	return f.list(key, splitGlobs)
}

func (f *fields) list(key string, fromString func(string) []string) []string {
	v, ok := f.Meta[key]
	if !ok || v == nil {
		return nil
	}
	var out []string
	switch v := v.(type) {
	case string:
		for _, s := range fromString(v) {
			out = appendTrimmed(out, s)
		}
	case []any:
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				f.problem("%s: element %d (%s) is not a string; dropped", key, i+1, show(e))
				continue
			}
			out = appendTrimmed(out, s)
		}
	default:
		f.problem("%s: %s is neither a string nor a list of strings; ignored", key, show(v))
	}
	return out
}

func appendTrimmed(list []string, s string) []string {
	if s = strings.TrimSpace(s); s != "" {
		list = append(list, s)
	}
	return list
}

// Conditions returns the rule's stream trigger patterns: `condition`
// (a string or a list of strings), else `ttsr_trigger`, else `ttsrTrigger`
// (each a string). A key whose value is unusable counts as absent, so the
// next one is tried.
func (f *fields) Conditions() []string {
	if c := f.StringList("condition"); len(c) > 0 {
		return c
	}
	for _, key := range []string{"ttsr_trigger", "ttsrTrigger"} {
		if s, ok := f.String(key); ok && strings.TrimSpace(s) != "" {
			return []string{s}
		}
	}
	return nil
}

// splitGlobs splits a comma-separated glob list, ignoring commas inside
// braces, and trims each part; empty parts are dropped.
func splitGlobs(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				out = appendTrimmed(out, s[start:i])
				start = i + 1
			}
		}
	}
	return appendTrimmed(out, s[start:])
}

// show renders a metadata value for a problem message: strings quoted, other
// values in Go's default format, long ones cut.
func show(v any) string {
	var s string
	switch v := v.(type) {
	case nil:
		s = "(empty)"
	case string:
		s = fmt.Sprintf("%q", v)
	case map[string]any, map[any]any:
		s = "a mapping"
	case []any:
		s = "a list"
	default:
		s = fmt.Sprint(v)
	}
	const max = 60
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return s
}

// ParseRule turns one loaded file into a Rule at the given level, with the
// normalization all four built-in providers share: frontmatter as package
// frontmatter parses it, content = the body, description a string,
// alwaysApply a boolean, globs a list or a comma-separated string, condition /
// ttsr_trigger / ttsrTrigger as the stream trigger. The rule is named after
// the file (File.Name); a provider with a fixed name sets Rule.Name
// afterwards.
//
// The spec's per-provider differences (cursor keeps only alwaysApply: true;
// native casts without checking) collapse here because Rule's fields are
// typed: false and unset are the same bool, and a value of the wrong type
// cannot be carried at all, so it is dropped with a warning everywhere.
//
// Every problem comes back as a warning naming the file; the rule is still
// returned, even for an empty file (the spec loads it), so the user sees it.
func ParseRule(f File, level Level) (Rule, []Warning) {
	rf := ParseRuleFile(f, level)
	return rf.Rule, rf.Warnings
}

// RuleFile is one rule file parsed for a provider that reads more of its
// frontmatter than the fields every provider shares (Windsurf's trigger,
// Cline's paths), to decide the rule's Activation.
type RuleFile struct {
	Rule Rule
	// Frontmatter says the file opened with a frontmatter block.
	Frontmatter bool
	// Warnings are ParseRule's, plus one for each value of the wrong type
	// read through String or Globs.
	Warnings []Warning
	meta     *fields
	path     string
}

// ParseRuleFile parses f as ParseRule does and keeps the frontmatter for the
// provider's own keys. keys lists the extra keys the provider reads itself:
// "trigger" among them leaves out ParseRule's warning that Windsurf's
// trigger is not read.
func ParseRuleFile(f File, level Level, keys ...string) RuleFile {
	r, fm, meta, warnings := parseRule(f, level, keys)
	return RuleFile{Rule: r, Frontmatter: fm, Warnings: warnings, meta: meta, path: f.Path}
}

// Has reports whether the frontmatter sets key to a value other than null.
func (rf *RuleFile) Has(key string) bool {
	return rf.meta != nil && rf.meta.Meta[key] != nil
}

// String returns the string value of key; a value of another type is a
// warning and counts as absent.
func (rf *RuleFile) String(key string) (string, bool) {
	s, ok := rf.meta.String(key)
	rf.flush()
	return s, ok
}

// Globs returns the globs under key as ParseRule reads `globs`: a list of
// strings, or one string split on the commas outside braces.
func (rf *RuleFile) Globs(key string) []string {
	g := rf.meta.Globs(key)
	rf.flush()
	return g
}

func (rf *RuleFile) flush() {
	for _, p := range rf.meta.Problems {
		rf.Warnings = append(rf.Warnings, Warning{Path: rf.path, Message: p})
	}
	rf.meta.Problems = nil
}

func parseRule(f File, level Level, keys []string) (Rule, bool, *fields, []Warning) {
	doc := f.parsed.Parse(f.Data)
	meta := newFields(doc.Meta)
	r := Rule{
		Name:    f.Name,
		Path:    f.Path,
		Content: doc.Body,
		Level:   level,
		Globs:   meta.Globs("globs"),
	}
	r.Description, _ = meta.String("description")
	r.AlwaysApply, _ = meta.Bool("alwaysApply")
	r.Condition = meta.Conditions()

	var warnings []Warning
	warn := func(msg string) { warnings = append(warnings, Warning{Path: f.Path, Message: msg}) }
	for _, w := range doc.Warnings {
		warn(w)
	}
	for _, p := range meta.Problems {
		warn(p)
	}
	switch {
	case doc.Body != "":
	case doc.HasFrontmatter:
		warn("rule has frontmatter but no content")
	default:
		warn("empty rule file")
	}
	meta.Problems = nil
	if t, ok := doc.Meta["trigger"]; ok && !slices.Contains(keys, "trigger") {
		// Windsurf's activation field, found in Windsurf rules and in Cursor
		// rules copied from them. The reference pipeline does not read it;
		// say so rather than ignore it silently, and say when that leaves the
		// rule with no way to reach the model.
		msg := fmt.Sprintf("trigger: %s is Windsurf's activation mode, which is not read", show(t))
		if r.Description == "" && !r.AlwaysApply && len(r.Condition) == 0 {
			msg += "; without description, alwaysApply or condition the rule is never offered to the model"
		}
		warn(msg)
	}
	return r, doc.HasFrontmatter, meta, warnings
}
