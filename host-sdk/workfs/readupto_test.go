package workfs

import (
	"strings"
	"testing"
)

// readUpTo trusts fstat's size only as a first guess: a file that grew or
// shrank since is read to its end, and the cap still holds.
func TestReadUpTo(t *testing.T) {
	text := strings.Repeat("abcdefgh", 1000)
	for _, c := range []struct {
		name        string
		size, limit int64
		want        int
	}{
		{"exact size", 8000, 0, 8000},
		{"grew since fstat", 10, 0, 8000},
		{"shrank since fstat", 20000, 0, 8000},
		{"size unknown", 0, 0, 8000},
		{"capped: one byte over the cap tells it is too large", 8000, 100, 101},
		{"cap above the size", 8000, 1 << 20, 8000},
	} {
		got, err := readUpTo(strings.NewReader(text), c.size, c.limit)
		if err != nil || len(got) != c.want || string(got) != text[:c.want] {
			t.Errorf("%s: got %d bytes, %v; want %d", c.name, len(got), err, c.want)
		}
	}
}
