package instructions

import "unicode/utf8"

// isJSSpace reports whether r is removed by JavaScript's
// String.prototype.trim: the WhiteSpace and LineTerminator productions of
// ECMAScript. It differs from unicode.IsSpace, which includes U+0085 (NEL)
// and excludes U+FEFF (the byte order mark); JS is the reverse.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\v', '\f', ' ', 0x00A0, 0xFEFF, // WhiteSpace outside Zs
		'\n', '\r', 0x2028, 0x2029, // LineTerminator
		0x1680, 0x202F, 0x205F, 0x3000: // Zs
		return true
	}
	return r >= 0x2000 && r <= 0x200A // Zs: en quad .. hair space
}

// jsTrim trims b as String.prototype.trim would trim its UTF-8 decoding.
// Invalid UTF-8 is never white space, so it stops the trim.
func jsTrim(b []byte) []byte {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if (r == utf8.RuneError && n <= 1) || !isJSSpace(r) {
			break
		}
		b = b[n:]
	}
	for len(b) > 0 {
		r, n := utf8.DecodeLastRune(b)
		if (r == utf8.RuneError && n <= 1) || !isJSSpace(r) {
			break
		}
		b = b[:len(b)-n]
	}
	return b
}
