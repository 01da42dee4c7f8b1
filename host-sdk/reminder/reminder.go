// Package reminder is the <system-reminder> framing hosts use for text they
// inject into the conversation, and the escape that keeps injected text from
// closing the frame.
package reminder

import "strings"

// Wrap frames body as a system reminder:
//
//	<system-reminder>
//	BODY
//	</system-reminder>
//
// body is written as is: escape whatever in it comes from files or rules
// with Escape first.
func Wrap(body string) string {
	return "<system-reminder>\n" + body + "\n</system-reminder>"
}

// Escape makes s safe inside a <system-reminder> block: every
// "</system-reminder" (any case, since a model need not care about case)
// becomes "<\/system-reminder". A sequence that already had backslashes after
// the "<" gains one more, so the escape is exactly reversible by Unescape.
// Only the closing tag is escaped: it is the only way out of the frame.
func Escape(s string) string { return shiftBackslashes(s, 1) }

// Unescape reverses Escape.
func Unescape(s string) string { return shiftBackslashes(s, -1) }

// shiftBackslashes finds "<" + backslashes + "/system-reminder" and adds
// (delta 1) or removes (delta -1, only where there is one) a backslash.
func shiftBackslashes(s string, delta int) string {
	const tag = "/system-reminder"
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '<' {
			continue
		}
		j := i + 1
		for j < len(s) && s[j] == '\\' {
			j++
		}
		if len(s)-j < len(tag) || !strings.EqualFold(s[j:j+len(tag)], tag) {
			continue
		}
		if delta < 0 && j == i+1 {
			continue
		}
		b.WriteString(s[last : i+1])
		if delta > 0 {
			b.WriteString("\\")
			last = i + 1
		} else {
			last = i + 2
		}
		i = j + len(tag) - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
