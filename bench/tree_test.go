package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// provider is where one built-in provider reads project rules, relative to
// the workspace, and the extension it accepts.
type provider struct {
	name, dir, ext string
}

var providers = [...]provider{
	{"native", ".xcsh/rules", ".md"},
	{"cursor", ".cursor/rules", ".mdc"},
	{"windsurf", ".windsurf/rules", ".md"},
	{"cline", ".clinerules", ".md"},
}

// tree is a generated workspace: a .git root holding perProvider[i] rule
// files of about size bytes each for providers[i], and an empty home.
type tree struct {
	ws, home string
	per      [4]int // files per provider, in providers' order
	files    int
	bytes    int64
}

// genTree writes the workspace under dir. Each file has frontmatter (a
// description, globs on every other file) and a body padded to size.
func genTree(tb testing.TB, dir string, perProvider [4]int, size int) tree {
	tb.Helper()
	t := tree{ws: filepath.Join(dir, "ws"), home: filepath.Join(dir, "home"), per: perProvider}
	must(tb, os.MkdirAll(filepath.Join(t.ws, ".git"), 0o755), os.MkdirAll(t.home, 0o755))
	line := "Keep functions short, name things for what they do, and test each behaviour once.\n"
	for i, p := range providers {
		d := filepath.Join(t.ws, p.dir)
		must(tb, os.MkdirAll(d, 0o755))
		for j := range perProvider[i] {
			var sb strings.Builder
			fmt.Fprintf(&sb, "---\ndescription: %s rule %d for the generated workspace\n", p.name, j)
			if j%2 == 0 {
				fmt.Fprintf(&sb, "globs: src/pkg%d/**/*.go\n", j)
			}
			fmt.Fprintf(&sb, "---\n# %s rule %d\n", p.name, j)
			for sb.Len() < size {
				sb.WriteString(line)
			}
			body := sb.String()
			if len(body) > size {
				body = body[:size]
			}
			name := filepath.Join(d, fmt.Sprintf("%s-%05d%s", p.name, j, p.ext))
			must(tb, os.WriteFile(name, []byte(body), 0o644))
			t.files++
			t.bytes += int64(len(body))
		}
	}
	return t
}

func must(tb testing.TB, errs ...error) {
	tb.Helper()
	for _, err := range errs {
		if err != nil {
			tb.Fatal(err)
		}
	}
}
