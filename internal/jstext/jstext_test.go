package jstext

import (
	"testing"
	"unicode"
)

// all is every character String.prototype.trim removes.
const all = "\t\v\f \u00A0\uFEFF\n\r\u2028\u2029\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200A\u202F\u205F\u3000"

// kept are characters that look like white space to someone but that
// String.prototype.trim keeps, and invalid UTF-8.
var kept = []string{"\u0085", "\u180E", "\u200B", "\x00", "\xff"}

func TestTrimBytes(t *testing.T) {
	if got := string(TrimBytes([]byte(all + "x y" + all))); got != "x y" {
		t.Errorf("got %q", got)
	}
	for _, keep := range kept {
		if got := string(TrimBytes([]byte(keep + "x" + keep))); got != keep+"x"+keep {
			t.Errorf("%q trimmed: %q", keep, got)
		}
	}
	if len(TrimBytes([]byte(all))) != 0 {
		t.Error("all white space")
	}
}

func TestTrim(t *testing.T) {
	if got := Trim("\uFEFF \u00a0\t\nx y\n\u2028"); got != "x y" {
		t.Errorf("Trim = %q", got)
	}
	if got := Trim(all + "x y" + all); got != "x y" {
		t.Errorf("got %q", got)
	}
	for _, keep := range kept {
		if got := Trim(keep + "x" + keep); got != keep+"x"+keep {
			t.Errorf("%q trimmed: %q", keep, got)
		}
	}
	if Trim(all) != "" {
		t.Error("all white space")
	}
	// Invalid UTF-8 stops the trim even when white space lies beyond it.
	if got := Trim(" \xff \xff "); got != "\xff \xff" {
		t.Errorf("got %q", got)
	}
}

// TestIsSpaceMatchesECMAScript checks IsSpace against its definition:
// WhiteSpace is TAB VT FF SP U+00A0 U+FEFF and category Zs; LineTerminator
// is LF CR U+2028 U+2029.
func TestIsSpaceMatchesECMAScript(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := unicode.Is(unicode.Zs, r)
		switch r {
		case '\t', '\v', '\f', ' ', 0x00A0, 0xFEFF, '\n', '\r', 0x2028, 0x2029:
			want = true
		}
		if IsSpace(r) != want {
			t.Errorf("IsSpace(%U) = %v", r, !want)
		}
	}
}

func FuzzTrimAgreesWithTrimBytes(f *testing.F) {
	f.Add([]byte(all + "x" + all))
	f.Add([]byte(" \xff "))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := string(TrimBytes(b)), Trim(string(b)); got != want {
			t.Fatalf("TrimBytes %q, Trim %q", got, want)
		}
	})
}
