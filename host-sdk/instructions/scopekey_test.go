package instructions

import (
	"context"
	"strings"
	"testing"
)

func contextWithCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}

func TestScopeKey(t *testing.T) {
	for _, tc := range [][2]string{{".", "AGENTS.md"}, {"a/b", "CLAUDE.local.md"}, {UserGlobalDir, "AGENTS.md"}, {"./user-global", "AGENTS.md"}} {
		k := ScopeKey(tc[0], tc[1])
		d, c, err := ParseScopeKey(k)
		if err != nil || d != tc[0] || c != tc[1] {
			t.Errorf("%q: %q %q %v", k, d, c, err)
		}
	}
	for _, bad := range []string{"", "noNUL", "\x00AGENTS.md", "dir\x00"} {
		if _, _, err := ParseScopeKey(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// A workspace directory literally named user-global does not collide
	// with the user-global scope.
	if l, _ := dirLabel("/w", "/w/user-global"); l == UserGlobalDir || dirPath("/w", "/h", l) != "/w/user-global" {
		t.Errorf("label %q", l)
	}
	if dirPath("/w", "/h", UserGlobalDir) != "/h" {
		t.Error("user-global path")
	}
	for _, l := range []string{"a", "a/b", ".", UserGlobalDir, "./user-global"} {
		if !validLabel(l) {
			t.Errorf("%q rejected", l)
		}
	}
	for _, l := range []string{"", "..", "../x", "a/../b", "/abs", "a//b", "./a", "a\\b"} {
		if validLabel(l) {
			t.Errorf("%q accepted", l)
		}
	}
	if _, ok := dirLabel("/w", "/x"); ok {
		t.Error("outside root labelled")
	}
}

func FuzzScopeKey(f *testing.F) {
	f.Add(".", "AGENTS.md")
	f.Add("a/b/c", "CLAUDE.local.md")
	f.Add(UserGlobalDir, "AGENTS.md")
	f.Add("x\x00y", "z")
	f.Fuzz(func(t *testing.T, dir, candidate string) {
		if dir != "" && candidate != "" && !strings.Contains(candidate, "\x00") {
			d, c, err := ParseScopeKey(ScopeKey(dir, candidate))
			if err != nil || d != dir || c != candidate {
				t.Fatalf("round trip of (%q, %q): (%q, %q) %v", dir, candidate, d, c, err)
			}
		}
		// Decoding arbitrary input never panics, and what decodes re-encodes
		// to the same key.
		key := dir + candidate
		if d, c, err := ParseScopeKey(key); err == nil && ScopeKey(d, c) != key {
			t.Fatalf("re-encode of %q gave %q", key, ScopeKey(d, c))
		}
	})
}
