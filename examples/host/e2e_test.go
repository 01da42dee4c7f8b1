package main

import (
	"bytes"
	"encoding/json"
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

	"github.com/rulebroker/rulebroker/host-sdk/sandbox"
)

// binDir holds the binaries the scripts run, built once by TestMain: the host
// itself (which also serves the built-in providers as child processes of
// itself), the example third-party provider, and providers that misbehave.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "rulebroker-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	builds := map[string]string{
		"host":                           ".",
		"rulebroker-provider-team":       "../provider-team",
		"rulebroker-provider-crash":      "./testdata/providers/crash",
		"rulebroker-provider-hang":       "./testdata/providers/hang",
		"rulebroker-provider-wrongproto": "./testdata/providers/wrongversion",
		"rulebroker-provider-hostile":    "./testdata/providers/hostile",
		// The built-ins as separately built binaries, as a user would install them.
		"standalone/rulebroker-provider-native":   "../../providers/native/cmd/rulebroker-provider-native",
		"standalone/rulebroker-provider-cursor":   "../../providers/cursor/cmd/rulebroker-provider-cursor",
		"standalone/rulebroker-provider-windsurf": "../../providers/windsurf/cmd/rulebroker-provider-windsurf",
		"standalone/rulebroker-provider-cline":    "../../providers/cline/cmd/rulebroker-provider-cline",
	}
	for out, pkg := range builds {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, out), pkg)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n", pkg, err)
			return 1
		}
	}
	return m.Run()
}

func TestScripts(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process checks read /proc")
	}
	demo, err := filepath.Abs("../demo")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", binDir+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("BIN", binDir)
			env.Setenv("DEMO", demo)
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Setenv("RULEBROKER_PLUGIN_PATH", "")
			// Providers get only an allow-listed environment; RULEBROKER_*
			// passes, so this marks every process the script starts,
			// providers and what they start included.
			env.Setenv(procMarkerEnv, env.WorkDir)
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
			"noprocs":  cmdNoProcs,
			"waitproc": cmdWaitProc,
			"json":     cmdJSON,
			"timer":    cmdTimer,
		},
	})
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
		if stat, err := os.ReadFile("/proc/" + pid + "/stat"); err == nil && isZombie(stat) {
			continue
		}
		exe, _ := os.Readlink("/proc/" + pid + "/exe")
		out = append(out, pid+" "+exe)
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
	// if it dies; give the kernel a moment to deliver a signal already sent.
	var left []string
	for i := 0; i < 50; i++ {
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
