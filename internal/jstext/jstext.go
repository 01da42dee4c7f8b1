// Package jstext holds text helpers that must behave exactly like their
// JavaScript counterparts, shared by the plugin SDK and the host SDK.
package jstext

import "unicode/utf8"

// IsSpace reports whether r is removed by JavaScript's
// String.prototype.trim: the WhiteSpace and LineTerminator productions of
// ECMAScript. It differs from unicode.IsSpace, which includes U+0085 (NEL)
// and excludes U+FEFF (the byte order mark); JS is the reverse.
func IsSpace(r rune) bool {
	switch r {
	case '\t', '\v', '\f', ' ', 0x00A0, 0xFEFF, // WhiteSpace outside Zs
		'\n', '\r', 0x2028, 0x2029, // LineTerminator
		0x1680, 0x202F, 0x205F, 0x3000: // Zs
		return true
	}
	return r >= 0x2000 && r <= 0x200A // Zs: en quad .. hair space
}

// Trim trims s as String.prototype.trim would trim its UTF-8 decoding.
// Invalid UTF-8 is never white space, so it stops the trim.
func Trim(s string) string {
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if (r == utf8.RuneError && n <= 1) || !IsSpace(r) {
			break
		}
		s = s[n:]
	}
	for len(s) > 0 {
		r, n := utf8.DecodeLastRuneInString(s)
		if (r == utf8.RuneError && n <= 1) || !IsSpace(r) {
			break
		}
		s = s[:len(s)-n]
	}
	return s
}

// TrimBytes is Trim for a byte slice; it returns a subslice of b.
func TrimBytes(b []byte) []byte {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if (r == utf8.RuneError && n <= 1) || !IsSpace(r) {
			break
		}
		b = b[n:]
	}
	for len(b) > 0 {
		r, n := utf8.DecodeLastRune(b)
		if (r == utf8.RuneError && n <= 1) || !IsSpace(r) {
			break
		}
		b = b[:len(b)-n]
	}
	return b
}
