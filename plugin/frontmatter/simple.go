package frontmatter

import (
	"strings"
	"unicode/utf8"
)

// Most frontmatter is a few "key: value" lines of plain words, and yaml.v3
// took most of a provider's time on them: tens of microseconds for three
// lines, while a live host re-parses an edited file on every round. So a
// block made only of such lines is read here, and anything else goes to
// YAML. The rule for what is read here is narrow on purpose: every line is
// empty or "key: value" at the left margin, with a key of letters, digits,
// "_" and "-" that YAML reads as a string, no key twice, and a value that is
// empty (null), exactly "true" or "false" (a boolean), text quoted whole in
// single quotes or in double quotes without escapes, or plain text that
// starts with a letter (or a character beyond ASCII) and holds none of the
// characters that could make YAML read it as anything but that same text
// (":", "#", brackets, braces, a backslash, a control character, trailing
// blanks). For such a block the result is the one YAML gives; a test
// compares the two on every input a fuzzer finds.

// parseSimple reads block when it is of the simple kind; ok is false when
// YAML must read it.
func parseSimple(block string) (meta map[string]any, ok bool) {
	meta = map[string]any{}
	for line := range strings.Lines(block) {
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			continue
		}
		key, value, found := strings.Cut(line, ":")
		if !found || !simpleKey(key) {
			return nil, false
		}
		if _, dup := meta[key]; dup {
			return nil, false
		}
		if value == "" {
			meta[key] = nil
			continue
		}
		if value[0] != ' ' {
			return nil, false // "key:value" is one plain scalar to YAML
		}
		value = strings.TrimLeft(value, " ")
		switch {
		case value == "":
			meta[key] = nil
		case value == "true":
			meta[key] = true
		case value == "false":
			meta[key] = false
		case simpleText(value):
			meta[key] = value
		default:
			text, ok := simpleQuoted(value)
			if !ok {
				return nil, false
			}
			meta[key] = text
		}
	}
	return meta, true
}

// simpleKey reports a key YAML reads as that same string.
func simpleKey(key string) bool {
	// YAML gives up on a key longer than 1,024 characters; real keys are
	// short.
	if key == "" || len(key) > 128 || !isLetter(key[0]) && key[0] != '_' {
		return false
	}
	for i := 1; i < len(key); i++ {
		if c := key[i]; !isLetter(c) && !isDigit(c) && c != '_' && c != '-' {
			return false
		}
	}
	// YAML reads these as a null or a boolean, not as text.
	switch strings.ToLower(key) {
	case "null", "true", "false":
		return false
	}
	return true
}

// simpleText reports a value YAML reads as that same text: a plain scalar
// that starts with a letter (or a character beyond ASCII), so it is neither
// a number, a date, a null, an indicator nor a quoted string, and that holds
// nothing YAML treats specially after the start.
func simpleText(v string) bool {
	if v[0] < utf8.RuneSelf && !isLetter(v[0]) || v[len(v)-1] == ' ' {
		return false
	}
	switch v {
	case "null", "Null", "NULL", "True", "TRUE", "False", "FALSE":
		return false
	}
	return !strings.ContainsAny(v, `:#[]{}\`) && printable(v)
}

// simpleQuoted reads a value quoted whole on its line: in single quotes,
// where a doubled quote stands for one, or in double quotes without a
// backslash escape or a quote inside. YAML reads either as a string,
// whatever it holds. The text inside must be printable and may hold
// anything else, ":" and "#" included.
func simpleQuoted(v string) (string, bool) {
	if len(v) < 2 || v[0] != v[len(v)-1] || v[0] != '\'' && v[0] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	if !printable(inner) {
		return "", false
	}
	if v[0] == '"' {
		return inner, !strings.ContainsAny(inner, `"\`)
	}
	text := strings.ReplaceAll(inner, "''", "")
	if strings.Contains(text, "'") {
		return "", false // a lone quote would have ended the string
	}
	return strings.ReplaceAll(inner, "''", "'"), true
}

// printable reports text made only of characters YAML takes inside a
// scalar on one line, as they are.
func printable(v string) bool {
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(v[i:])
		// YAML's printable characters above ASCII, without the byte order
		// mark, which it treats specially, and the line and paragraph
		// separators, which it reads as line breaks.
		if r == utf8.RuneError && size == 1 || r < 0xA0 || r > 0xD7FF && r < 0xE000 ||
			r == 0x2028 || r == 0x2029 || r == 0xFEFF || r == 0xFFFE || r == 0xFFFF {
			return false
		}
		i += size
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
