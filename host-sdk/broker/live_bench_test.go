package broker

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rulebroker/rulebroker/host-sdk/workfs"
	"github.com/rulebroker/rulebroker/plugin"
	"github.com/rulebroker/rulebroker/providers/cline"
	"github.com/rulebroker/rulebroker/providers/cursor"
	"github.com/rulebroker/rulebroker/providers/native"
	"github.com/rulebroker/rulebroker/providers/windsurf"
	"github.com/rulebroker/rulebroker/shared"
)

// realProviderEnv re-executes the test binary as one of the built-in
// providers, so the benchmarks measure the real ones over real gRPC.
const realProviderEnv = "BROKER_TEST_REAL_PROVIDER"

var realProviders = map[string]func() plugin.Provider{
	"native": native.New, "cursor": cursor.New, "windsurf": windsurf.New, "cline": cline.New,
}

func realBuiltins() []Builtin {
	var out []Builtin
	for _, name := range []string{"native", "cursor", "windsurf", "cline"} {
		out = append(out, Builtin{Name: name, Env: []string{realProviderEnv + "=" + name}})
	}
	return out
}

// copyTree copies src to dst and dates every entry an hour back, so no
// fact is racy: the benchmark measures the settled round.
func copyTree(b testing.TB, src, dst string) {
	b.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, data, 0o644)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	age(b, dst)
}

func age(b testing.TB, root string) {
	b.Helper()
	old := time.Now().Add(-time.Hour)
	var dirs []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink == 0 {
			if d.IsDir() {
				dirs = append(dirs, p)
			} else {
				os.Chtimes(p, old, old)
			}
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- { // children first: they stamp their parent
		os.Chtimes(dirs[i], old, old)
	}
}

// bigTree writes 1,000 rule files into each of the four built-ins' project
// rule directories.
func bigTree(b *testing.B, dir string) {
	b.Helper()
	for _, sub := range []string{".xcsh/rules", ".cursor/rules", ".windsurf/rules", ".clinerules"} {
		if err := os.MkdirAll(filepath.Join(dir, "ws", sub), 0o755); err != nil {
			b.Fatal(err)
		}
		for i := range 1000 {
			body := fmt.Sprintf("---\ndescription: rule %d\n---\nDo thing %d.\n", i, i)
			if err := os.WriteFile(filepath.Join(dir, "ws", sub, fmt.Sprintf("r%04d.md", i)), []byte(body), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	os.MkdirAll(filepath.Join(dir, "home"), 0o755)
	age(b, dir)
}

func startBench(b *testing.B, ws, home string) *Live {
	b.Helper()
	l, err := Start(context.Background(), Options{Builtins: realBuiltins(), FS: workfs.OS{}, Timeout: time.Minute},
		shared.DiscoverRequest{Cwd: ws, Home: home, WorkspaceRoot: ws})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(l.Close)
	for _, p := range l.Result().Providers {
		if p.Err != nil {
			b.Fatalf("provider %s: %v", p.Name, p.Err)
		}
	}
	return l
}

func recordedPaths(l *Live) []string {
	var out []string
	for _, p := range l.provs {
		out = append(out, p.facts.paths()...)
	}
	return out
}

// BenchmarkLiveRound measures a post-execute round of the live broker on the
// demo workspace and on a tree of 4 × 1,000 rule files: with nothing changed
// (no Discover), against a bare os.Stat of the same recorded paths, and with
// one rule file edited (the cursor provider re-discovers in its running
// process).
func BenchmarkLiveRound(b *testing.B) {
	ctx := context.Background()
	demo := b.TempDir()
	copyTree(b, "../../examples/demo", demo)
	big := b.TempDir()
	bigTree(b, big)
	trees := []struct{ name, ws, home, edit string }{
		{"demo", filepath.Join(demo, "workspace"), filepath.Join(demo, "home"), filepath.Join(demo, "workspace/.cursor/rules/testing.mdc")},
		{"4x1000", filepath.Join(big, "ws"), filepath.Join(big, "home"), filepath.Join(big, "ws/.cursor/rules/r0500.md")},
	}
	// What a one-shot host does on every run, for the ratio: start the four
	// providers, describe, discover, merge, stop.
	b.Run("demo/one-shot-load", func(b *testing.B) {
		for b.Loop() {
			if _, err := Load(ctx, Options{Builtins: realBuiltins(), FS: workfs.OS{}, Timeout: time.Minute},
				shared.DiscoverRequest{Cwd: trees[0].ws, Home: trees[0].home, WorkspaceRoot: trees[0].ws}); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, tr := range trees {
		l := startBench(b, tr.ws, tr.home)
		paths := recordedPaths(l)
		b.Run(tr.name+"/unchanged", func(b *testing.B) {
			n := l.Discovers()
			for b.Loop() {
				if _, err := l.Refresh(ctx, nil); err != nil {
					b.Fatal(err)
				}
			}
			if l.Discovers() != n {
				b.Fatalf("an unchanged round ran Discover %d times", l.Discovers()-n)
			}
			b.ReportMetric(float64(len(paths)), "paths")
		})
		b.Run(tr.name+"/os.Stat", func(b *testing.B) {
			for b.Loop() {
				for _, p := range paths {
					os.Stat(p)
				}
			}
			b.ReportMetric(float64(len(paths)), "paths")
		})
		b.Run(tr.name+"/one-edited", func(b *testing.B) {
			orig, err := os.ReadFile(tr.edit)
			if err != nil {
				b.Fatal(err)
			}
			i := 0
			n := l.Discovers()
			for b.Loop() {
				b.StopTimer()
				i++
				// Another size each time, so the stat shows the edit even
				// inside one timestamp tick.
				os.WriteFile(tr.edit, append(orig, fmt.Sprintf("\nedit %d%s", i, make([]byte, i%2))...), 0o644)
				b.StartTimer()
				ch, err := l.Refresh(ctx, nil)
				if err != nil || len(ch.Discovered) != 1 {
					b.Fatalf("round %d: discovered %v, err %v", i, ch.Discovered, err)
				}
			}
			b.ReportMetric(float64(l.Discovers()-n)/float64(b.N), "discovers/op")
		})
	}
}
