package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rulebroker/rulebroker/host-sdk/broker"
	"github.com/rulebroker/rulebroker/host-sdk/sandbox"
	"github.com/rulebroker/rulebroker/internal/testmain"
)

// The test binary is every program the end-to-end tests run. testscript.Main
// installs it in a directory on $PATH under each command's name and, run
// under one of those names, it is that program instead of the tests:
//
//   - host: the example host's own main, so it also serves its built-in
//     providers by re-executing itself (broker.SelfExec), as the real binary
//     does;
//   - rulebroker-provider-NAME: the four built-ins as standalone binaries and
//     the misbehaving providers of providers_test.go.
//
// The one binary still built is examples/provider-team (see teamBuild).
//
// Under -race the copies testscript.Main installs are replaced by one plain
// build of this test binary (see plainChildren).
func TestMain(m *testing.M) {
	cmds := map[string]func(){"host": main}
	for name, serve := range providerCommands {
		cmds[broker.BinaryPrefix+name] = serve
	}
	testscript.Main(parallelM{m}, cmds)
}

// parallelM runs the tests with -parallel 4×GOMAXPROCS unless -parallel is
// given: each test mostly waits on its child processes (a provider's
// deadline, a handshake, a process to exit), so two at a time on two cores
// leaves the cores idle. It only wraps the tests' run: under a command's name
// the binary never parses test flags.
type parallelM struct{ m *testing.M }

func (p parallelM) Run() int {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
	if raceBuild {
		if err := plainChildren(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	code := p.m.Run()
	if code == 0 {
		// testscript.Main would remove the directory it installed the
		// commands in and then exit with the race runtime's exit sleep;
		// remove it here and exit without the sleep (see testmain).
		if dir := filepath.Dir(filepath.Dir(hostPath())); strings.HasPrefix(filepath.Base(dir), "testscript-main") {
			if err := os.RemoveAll(dir); err != nil {
				fmt.Fprintf(os.Stderr, "cannot delete the commands' directory: %v\n", err)
				code = 1
			}
		}
	}
	testmain.Exit(code)
	return code
}

// plainChildren replaces the commands testscript.Main installed, copies of
// this race-built test binary, with one build of it without the race
// detector. Every host and provider a script starts is one of them, a few
// hundred processes: under the race detector they cost more than half of
// this package's time under `go test -race ./...`, about twenty seconds of
// CPU, and the race detector has little to find in them that the rest of
// the suite does not. The broker's own tests run it with real provider
// processes, in a race-built test process against race-built providers
// (host-sdk/broker), as do the live broker's and the reconciler's; what
// runs only here under the detector is this example's own main, whose one
// goroutine feeds stdin lines to a loop. The test process itself, which
// drives the scripts and sessions, stays race-built.
//
// The build is bounded: with the build cache warm from the race build it
// is one compile of this package and a link, seconds; a fresh machine (CI)
// compiles the dependencies once without -race, which .ci/run's later
// non-race tests then reuse.
func plainChildren() error {
	host, err := exec.LookPath("host")
	if err != nil || filepath.Base(filepath.Dir(host)) != "bin" {
		return fmt.Errorf("the host command testscript.Main installs is not first on $PATH: %q, %v", host, err)
	}
	bin := filepath.Dir(host)
	plain := filepath.Join(filepath.Dir(bin), "plain.test") // removed with bin by testscript.Main
	const limit = 5 * time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	// -race=false: a GOFLAGS=-race in the environment must not undo this.
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-race=false", "-o", plain, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("not done within %v", limit)
		}
		return fmt.Errorf("building the end-to-end tests' hosts and providers without -race (go test -c -race=false -o %s .): %v\n%s", plain, err, out)
	}
	entries, err := os.ReadDir(bin)
	if err != nil {
		return err
	}
	for _, e := range entries {
		dst := filepath.Join(bin, e.Name())
		if err := os.Remove(dst); err != nil {
			return err
		}
		// A hard link, not a symlink: each command must keep its own name
		// as os.Args[0] and os.Executable, which is how the binary knows
		// what to be.
		if err := os.Link(plain, dst); err != nil {
			return fmt.Errorf("installing %s: %v", dst, err)
		}
	}
	return nil
}

// hostPath is where the host command testscript.Main installed is, or "".
func hostPath() string {
	path, _ := exec.LookPath("host")
	return path
}

// hostBinary is the host command testscript.Main installed.
func hostBinary(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("host")
	if err != nil || filepath.Base(filepath.Dir(path)) != "bin" {
		t.Fatalf("the host command testscript.Main installs is not first on $PATH: %q, %v", path, err)
	}
	return path
}

// teamBuild builds examples/provider-team, the example third-party provider.
// It stays a real `go build` of an unchanged package main: that example is
// the README's "a provider is one small main.go", and the test should run the
// binary a third party builds from it. The build runs in the background while
// the other scripts run; like every host and provider here it is built
// without -race (see plainChildren), so it reuses the packages already in
// the build cache and costs about one link.
type teamBuild struct {
	path string
	done chan struct{}
	err  error
}

func startTeamBuild(t *testing.T) *teamBuild {
	b := &teamBuild{path: filepath.Join(t.TempDir(), broker.BinaryPrefix+"team"), done: make(chan struct{})}
	cmd := exec.Command("go", "build", "-race=false", "-o", b.path, "../provider-team")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		b.err = fmt.Errorf("go build ../provider-team: %v", err)
		close(b.done)
		return b
	}
	go func() {
		if err := cmd.Wait(); err != nil {
			b.err = fmt.Errorf("go build ../provider-team: %v\n%s", err, out.Bytes())
		}
		close(b.done)
	}()
	// Registered after TempDir's removal, so it runs before it: the build is
	// over before its output directory goes.
	t.Cleanup(func() { <-b.done })
	return b
}

func (b *teamBuild) wait() (string, error) {
	<-b.done
	return b.path, b.err
}

// raceBuild is set by race_test.go.
var raceBuild bool

func TestScripts(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process checks read /proc")
	}
	t.Parallel()
	demo, err := filepath.Abs("../demo")
	if err != nil {
		t.Fatal(err)
	}
	binDir := filepath.Dir(hostBinary(t))
	team := startTeamBuild(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("DEMO", demo)
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Setenv("RULEBROKER_PLUGIN_PATH", "")
			// Providers get only an allow-listed environment; RULEBROKER_*
			// passes, so this marks every process the script starts,
			// providers and what they start included.
			env.Setenv(procMarkerEnv, env.WorkDir)
			liveSetup(env)
			return nil
		},
		// [landlock]: the kernel confines providers, so denials can be asserted.
		Condition: func(cond string) (bool, error) {
			if cond == "landlock" {
				_, ok := sandbox.Probe()
				return ok, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"timer":        cmdTimer,
			"noprocs":      cmdNoProcs,
			"waitproc":     cmdWaitProc,
			"json":         cmdJSON,
			"live":         cmdLive,
			"killprovider": cmdKillProvider,
			"genfile":      cmdGenfile,
			"install-provider": func(ts *testscript.TestScript, neg bool, args []string) {
				cmdInstallProvider(ts, neg, args, binDir, team)
			},
		},
	})
}

// genfile FILE HEAD N writes HEAD and then N bytes of 'x' to FILE (its
// directory made if missing). FILE and HEAD are Go string literals without
// the quotes, so '\xe9' is one byte: a file that is not UTF-8, or a file
// name that is not, which a script cannot hold as text.
func cmdGenfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: genfile FILE HEAD N")
	}
	var parts [2]string
	for i, a := range args[:2] {
		s, err := strconv.Unquote(`"` + a + `"`)
		ts.Check(err)
		parts[i] = s
	}
	n, err := strconv.Atoi(args[2])
	ts.Check(err)
	file := ts.MkAbs(parts[0])
	ts.Check(os.MkdirAll(filepath.Dir(file), 0o755))
	ts.Check(os.WriteFile(file, append([]byte(parts[1]), bytes.Repeat([]byte("x"), n)...), 0o644))
}

// install-provider DIR NAME... puts provider NAME into plugin directory DIR
// (made if missing) as a symbolic link named rulebroker-provider-NAME: to the
// test binary's command of that name, or for "team" to the built example.
// The broker finds a link like any file and runs it under the link's name.
func cmdInstallProvider(ts *testscript.TestScript, neg bool, args []string, binDir string, team *teamBuild) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: install-provider DIR NAME...")
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	for _, name := range args[1:] {
		var target string
		switch _, ok := providerCommands[name]; {
		case name == "team":
			path, err := team.wait()
			ts.Check(err)
			target = path
		case ok:
			target = filepath.Join(binDir, broker.BinaryPrefix+name)
		default:
			ts.Fatalf("install-provider: no provider %q", name)
		}
		ts.Check(os.Symlink(target, filepath.Join(dir, broker.BinaryPrefix+name)))
	}
}

// procMarkerEnv marks the processes a script starts, in their environment.
const procMarkerEnv = "RULEBROKER_E2E_WORK"

// scriptProcs lists live processes started from this script: every process
// the host or a provider runs inherits procMarkerEnv.
func scriptProcs(ts *testscript.TestScript) []string {
	marker := []byte(procMarkerEnv + "=" + ts.Getenv("WORK") + "\x00")
	self := fmt.Sprint(os.Getpid())
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + pid + "/environ")
		if err != nil || !bytes.Contains(env, marker) {
			continue
		}
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err == nil && isZombie(stat) {
			continue
		}
		exe, _ := os.Readlink("/proc/" + pid + "/exe")
		// The exe first (waitproc reads it), then what tells why a process
		// is still there: its state and parent, and its arguments.
		args, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		state := ""
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 {
			state = string(stat[i+1:])
			if f := strings.Fields(state); len(f) >= 2 {
				state = "state " + f[0] + " ppid " + f[1]
			}
		}
		out = append(out, pid+" "+exe+" "+state+" "+strings.ReplaceAll(string(bytes.TrimRight(args, "\x00")), "\x00", " "))
	}
	return out
}

func isZombie(stat []byte) bool {
	// The state follows the parenthesised command name: "pid (comm) S ...".
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// noprocs fails if any process started by this script is still alive.
func cmdNoProcs(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! noprocs")
	}
	// The host kills its providers before it exits, and Pdeathsig kills them
	// if it dies; give the kernel a moment to deliver a signal already sent
	// (on a machine the whole suite keeps busy, it can take seconds).
	var left []string
	for i := 0; i < 150; i++ {
		if left = scriptProcs(ts); len(left) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	ts.Fatalf("processes outlived their host:\n%s", strings.Join(left, "\n"))
}

// waitproc NAME waits until a process of this script runs a binary named NAME.
func cmdWaitProc(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: waitproc NAME")
	}
	for i := 0; i < 300; i++ {
		for _, p := range scriptProcs(ts) {
			if filepath.Base(strings.Fields(p)[1]) == args[0] {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	ts.Fatalf("no process %s appeared", args[0])
}

// jsonCmd checks one value in the JSON document the last command printed:
//
//	json PATH WANT
//
// PATH is dot-separated object keys and array indexes ("rules.0.name"); a
// final "@len" gives the length. WANT is compared with the value printed
// as Go prints it (strings bare). With !, the values must differ.
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: json PATH WANT")
	}
	var doc any
	if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &doc); err != nil {
		ts.Fatalf("stdout is not JSON: %v", err)
	}
	got, err := jsonAt(doc, args[0])
	if err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
	if (got == args[1]) == neg {
		ts.Fatalf("%s = %q, want %s%q", args[0], got, map[bool]string{true: "not ", false: ""}[neg], args[1])
	}
}

func jsonAt(v any, path string) (string, error) {
	for _, key := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			if key == "@len" {
				return fmt.Sprint(len(x)), nil
			}
			var ok bool
			if v, ok = x[key]; !ok {
				return "", fmt.Errorf("no key %q", key)
			}
		case []any:
			if key == "@len" {
				return fmt.Sprint(len(x)), nil
			}
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(x) {
				return "", fmt.Errorf("no index %q in an array of %d", key, len(x))
			}
			v = x[i]
		default:
			return "", fmt.Errorf("cannot index %T with %q", v, key)
		}
	}
	if f, ok := v.(float64); ok {
		// Plain digits, so a pid of 1234567 compares as "1234567", not
		// "1.234567e+06".
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	}
	return fmt.Sprint(v), nil
}

// timer start | timer below DURATION: how long the commands between took,
// checked against a generous bound (the host's deadline plus a constant),
// for a host that must not hang, never as a speed measurement.
func cmdTimer(ts *testscript.TestScript, neg bool, args []string) {
	switch {
	case len(args) == 1 && args[0] == "start":
		ts.Setenv("TIMER_START", strconv.FormatInt(time.Now().UnixNano(), 10))
	case len(args) == 2 && args[0] == "below":
		limit, err := time.ParseDuration(args[1])
		ts.Check(err)
		start, err := strconv.ParseInt(ts.Getenv("TIMER_START"), 10, 64)
		if err != nil {
			ts.Fatalf("timer below before timer start")
		}
		took := time.Since(time.Unix(0, start))
		if (took < limit) == neg {
			ts.Fatalf("took %v, limit %v", took.Round(time.Millisecond), limit)
		}
	default:
		ts.Fatalf("usage: timer start | timer below DURATION")
	}
}
