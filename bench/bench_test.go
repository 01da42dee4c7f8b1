package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rulebroker/rulebroker/host-sdk/broker"
	"github.com/rulebroker/rulebroker/host-sdk/instructions"
	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
	"github.com/rulebroker/rulebroker/host-sdk/ttsr"
	"github.com/rulebroker/rulebroker/host-sdk/workfs"
	"github.com/rulebroker/rulebroker/shared"
)

// reps is how many repetitions each figure is the median of.
func reps() int {
	if testing.Short() {
		return 1
	}
	return 5
}

// stats reports the median, min and max of samples under unit, and returns
// the median.
func stats(b *testing.B, unit string, samples []float64) float64 {
	s := slices.Clone(samples)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	b.ReportMetric(med, unit+"-median")
	b.ReportMetric(s[0], unit+"-min")
	b.ReportMetric(s[len(s)-1], unit+"-max")
	return med
}

// bins are the binaries the end-to-end figures run: the example host (which
// serves the four built-ins as children of itself) and, for the
// one-provider-alone runs, a plugin directory per built-in holding only it,
// built from providers/<name>/cmd as a user would install it. (A script that
// re-executes the host binary would not do: the sandbox lets a provider
// execute only its own verified binary and the system's.)
type bins struct {
	host       string
	standalone map[string]string // provider name → a plugin dir holding only it
}

func build(b *testing.B) bins {
	b.Helper()
	dir := b.TempDir()
	out := bins{host: filepath.Join(dir, "host"), standalone: map[string]string{}}
	goBuild(b, out.host, "../examples/host")
	for _, p := range providers {
		pd := filepath.Join(dir, "only-"+p.name)
		must(b, os.Mkdir(pd, 0o755))
		goBuild(b, filepath.Join(pd, broker.BinaryPrefix+p.name), "../providers/"+p.name+"/cmd/"+broker.BinaryPrefix+p.name)
		out.standalone[p.name] = pd
	}
	return out
}

func goBuild(b *testing.B, out, pkg string) {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", pkg, err, msg)
	}
}

// run is one process run: wall time and the kernel's peak RSS of the
// process and the descendants it waited for (the largest one, not a sum).
type run struct {
	wall  time.Duration
	rssMB float64
}

var rulesHeader = regexp.MustCompile(`(?m)^RULES \((\d+),`)

// runHost runs `host rules` once on t with the extra flags and checks that it
// printed want rules (-1: do not check).
func runHost(b *testing.B, host string, t tree, want int, flags ...string) run {
	b.Helper()
	args := append([]string{"rules", "--cwd", t.ws, "--home", t.home, "--timeout", "5m"}, flags...)
	var stdout bytes.Buffer
	// An empty plugin path and home keep the user's own providers out.
	r, stderr, err := wrapped(&stdout, append([]string{host}, args...), "RULEBROKER_PLUGIN_PATH=", "HOME="+t.home)
	if err != nil {
		b.Fatalf("host %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	if want >= 0 {
		m := rulesHeader.FindSubmatch(stdout.Bytes())
		if m == nil || string(m[1]) != strconv.Itoa(want) {
			b.Fatalf("host %s: want %d rules, output starts %.300q", strings.Join(args, " "), want, stdout.Bytes())
		}
	}
	return r
}

var maxrssLine = regexp.MustCompile(`\nmaxrss-kib (\d+)\n$`)

// wrapped runs argv under the rusage wrapper (see rusageEnv) with stdout to
// out and returns its wall time (the wrapper's start included, a
// millisecond or two) and peak RSS, and its stderr.
func wrapped(out io.Writer, argv []string, env ...string) (run, []byte, error) {
	self, err := os.Executable()
	if err != nil {
		return run{}, nil, err
	}
	cmd := exec.Command(self, argv...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	cmd.Env = append(append(os.Environ(), rusageEnv+"=1"), env...)
	start := time.Now()
	err = cmd.Run()
	r := run{wall: time.Since(start)}
	if m := maxrssLine.FindSubmatch(stderr.Bytes()); m != nil {
		kib, _ := strconv.ParseFloat(string(m[1]), 64)
		r.rssMB = kib / 1024
	}
	return r, stderr.Bytes(), err
}

// runCat is the floor: every file of the workspace read once by cat.
func runCat(b *testing.B, t tree) run {
	b.Helper()
	r, stderr, err := wrapped(io.Discard, []string{"find", t.ws, "-type", "f", "-exec", "cat", "{}", "+"})
	if err != nil {
		b.Fatalf("find -exec cat: %v\n%s", err, stderr)
	}
	return r
}

// measure runs f once to warm the caches, then reps() times, and reports
// wall time and peak RSS.
func measure(b *testing.B, f func() run) (wallMedian, rssMedian float64) {
	f()
	var walls, rss []float64
	for range reps() {
		r := f()
		walls = append(walls, r.wall.Seconds())
		rss = append(rss, r.rssMB)
	}
	b.ReportMetric(0, "ns/op")
	return stats(b, "s", walls), stats(b, "MB-peak-rss", rss)
}

// BenchmarkRulebroker is the whole benchmark command. The sub-benchmarks run
// in one process so their ratios compare like with like.
func BenchmarkRulebroker(b *testing.B) {
	bin := build(b)
	root := b.TempDir()
	// -short (CI) runs every figure on trees a tenth the size, so the
	// command cannot rot without costing CI a minute.
	scale := 1
	if testing.Short() {
		scale = 10
	}
	each := func(n int) [4]int { n /= 4 * scale; return [4]int{n, n, n, n} }
	small := genTree(b, filepath.Join(root, "small"), [4]int{5, 5, 4, 4}, 1<<10)
	per := genTree(b, filepath.Join(root, "per"), each(4000), 1<<10)
	big := genTree(b, filepath.Join(root, "big"), each(10000), 4<<10)
	huge := genTree(b, filepath.Join(root, "huge"), each(20000), 1<<10)
	bigName := fmt.Sprintf("%dx4KiB", big.files)
	hugeName := fmt.Sprintf("%dx1KiB", huge.files)

	oneShot := map[string]float64{}
	for _, c := range []struct {
		name string
		t    tree
	}{{"18", small}, {fmt.Sprintf("4x%d", per.files/4), per}, {bigName, big}, {hugeName, huge}} {
		b.Run("oneshot/"+c.name, func(b *testing.B) {
			for b.Loop() {
				wall, rss := measure(b, func() run { return runHost(b, bin.host, c.t, c.t.files) })
				oneShot[c.name] = wall
				b.ReportMetric(rss*(1<<20)/float64(c.t.bytes), "x-tree-bytes-rss")
			}
		})
		b.Run("cat/"+c.name, func(b *testing.B) {
			for b.Loop() {
				wall, _ := measure(b, func() run { return runCat(b, c.t) })
				if hw := oneShot[c.name]; hw > 0 {
					b.ReportMetric(hw/wall, "x-host-over-cat")
				}
			}
		})
	}
	b.Run(fmt.Sprintf("ratio/%d-over-%d", huge.files, big.files), func(b *testing.B) {
		for b.Loop() {
			b.ReportMetric(0, "ns/op")
			if oneShot[bigName] > 0 {
				b.ReportMetric(oneShot[hugeName]/oneShot[bigName], "x")
			}
		}
	})
	b.Run("noproviders/18", func(b *testing.B) {
		for b.Loop() {
			measure(b, func() run { return runHost(b, bin.host, small, 0, "--no-builtins") })
		}
	})
	slowest := 0.0
	for i, p := range providers {
		b.Run("alone/"+p.name+"/18", func(b *testing.B) {
			for b.Loop() {
				wall, _ := measure(b, func() run {
					return runHost(b, bin.host, small, small.per[i], "--no-builtins", "--plugin-dir", bin.standalone[p.name])
				})
				slowest = max(slowest, wall)
			}
		})
	}
	b.Run("ratio/four-over-slowest-alone/18", func(b *testing.B) {
		for b.Loop() {
			b.ReportMetric(0, "ns/op")
			if slowest > 0 {
				b.ReportMetric(oneShot["18"]/slowest, "x")
			}
		}
	})
}

// BenchmarkReconcile is one unchanged instruction round over 1,000 present
// scopes next to a bare os.Stat of the same 1,000 files.
func BenchmarkReconcile(b *testing.B) {
	ctx := context.Background()
	root := b.TempDir()
	must(b, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	old := time.Now().Add(-time.Hour)
	var files, touched []string
	for i := range 500 {
		d := filepath.Join(root, fmt.Sprintf("d%04d", i))
		must(b, os.Mkdir(d, 0o755))
		for _, c := range []string{"AGENTS.md", "CLAUDE.md"} {
			p := filepath.Join(d, c)
			must(b, os.WriteFile(p, fmt.Appendf(nil, "# %s %d\nSome instructions for this directory.\n", c, i), 0o644),
				os.Chtimes(p, old, old))
			files = append(files, p)
		}
		touched = append(touched, filepath.Join(d, "x.go"))
	}
	rec, err := instructions.New(instructions.Config{FS: workfs.OS{}, Cwd: root, LocalCandidates: []string{}, Budget: -1})
	must(b, err)
	_, err = rec.Baseline(ctx)
	must(b, err)
	if _, err := rec.PostExecute(ctx, "setup", touched); err != nil || len(rec.Loaded()) != len(files) {
		b.Fatalf("setup loaded %d scopes, want %d (%v)", len(rec.Loaded()), len(files), err)
	}
	const rounds = 20
	perRound := func(f func()) float64 {
		start := time.Now()
		for range rounds {
			f()
		}
		return float64(time.Since(start).Microseconds()) / 1000 / rounds
	}
	// The two are measured in alternation, each repetition one batch of
	// each, so a machine busy with something else slows both alike.
	b.Run("unchanged-round-vs-os.Stat/1000", func(b *testing.B) {
		for b.Loop() {
			var round, stat []float64
			for range max(reps(), 3) {
				round = append(round, perRound(func() {
					rd, err := rec.PostExecute(ctx, "noop", nil)
					if err != nil || len(rd.Changes) != 0 {
						b.Fatalf("unchanged round: %v %+v", err, rd.Changes)
					}
				}))
				stat = append(stat, perRound(func() {
					for _, f := range files {
						if _, err := os.Stat(f); err != nil {
							b.Fatal(err)
						}
					}
				}))
			}
			b.ReportMetric(0, "ns/op")
			r, s := stats(b, "ms-round", round), stats(b, "ms-stat", stat)
			b.ReportMetric(r/s, "x-round-over-stat")
		}
	})
}

// BenchmarkTTSR is the cost of one more 16-byte streamed delta after 1 KiB
// and after 1 MiB of turn output, with 500 trigger rules none of which fires.
func BenchmarkTTSR(b *testing.B) {
	templates := []string{
		`console\.log\(\s*"dbg%d`, `(?i)\bdeprecated_api_%d\b`, `(?i)never use legacy client %d`,
		`\bpanic\("unreachable %d"\)`, `(?:rm|rmdir) -rf /srv/data%d`, `TODO\(ticket-%d\)`,
		`\bfoo%dbar\w*`, `[A-Z]{3}-%d[0-9]{6}`,
	}
	rules := make([]ruleset.Rule, 500)
	for i := range rules {
		rules[i] = ruleset.Rule{Rule: shared.Rule{Name: fmt.Sprintf("rule-%d", i), Path: "/r.mdc", Content: "x",
			Condition: []string{fmt.Sprintf(templates[i%len(templates)], i)}}}
	}
	set, warns := ttsr.Compile(rules)
	if len(warns) != 0 {
		b.Fatal(warns)
	}
	text := strings.Repeat("The handler reads the request, validates it and writes the result.\n\tif err != nil { return err }\n", 1<<20/90+2)
	const delta, deltas = 16, 4096
	for _, pre := range []struct {
		name string
		size int
	}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}} {
		b.Run("per-delta/after-"+pre.name+"/500-rules", func(b *testing.B) {
			for b.Loop() {
				var s []float64
				for range reps() {
					// After 1 KiB the turn is restarted and refilled (untimed)
					// every 64 deltas, so the turn stays between 1 and 2 KiB;
					// after 1 MiB it only grows.
					batch := deltas
					if pre.size < 1<<20 {
						batch = 64
					}
					m := set.NewManager()
					var spent time.Duration
					for done := 0; done < deltas; done += batch {
						m.TurnStart()
						for i := 0; i < pre.size; i += 4096 {
							m.Feed("text", text[i:min(i+4096, pre.size)])
						}
						start := time.Now()
						for i := range batch {
							pos := (pre.size + i*delta) % (len(text) - delta)
							if ms := m.Feed("text", text[pos:pos+delta]); len(ms) != 0 {
								b.Fatalf("fired: %+v", ms)
							}
						}
						spent += time.Since(start)
					}
					s = append(s, float64(spent.Nanoseconds())/deltas)
				}
				b.ReportMetric(0, "ns/op")
				stats(b, "ns-per-delta", s)
			}
		})
	}
}
