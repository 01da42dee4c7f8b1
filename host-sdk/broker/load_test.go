package broker

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
	"github.com/rulebroker/rulebroker/host-sdk/sandbox"
	"github.com/rulebroker/rulebroker/host-sdk/trust"
	"github.com/rulebroker/rulebroker/host-sdk/workfs"
	"github.com/rulebroker/rulebroker/host-sdk/workfs/workfstest"
	"github.com/rulebroker/rulebroker/internal/testmain"
	"github.com/rulebroker/rulebroker/internal/wire"
	"github.com/rulebroker/rulebroker/plugin"
	"github.com/rulebroker/rulebroker/shared"
)

// The test binary doubles as a provider: re-executed with testProviderEnv
// set, it serves testProvider instead of running tests. Each provider is a
// real process speaking real gRPC, as in production.
const testProviderEnv = "BROKER_TEST_PROVIDER"

func TestMain(m *testing.M) {
	sandbox.Main()
	if name := os.Getenv(realProviderEnv); name != "" {
		plugin.Serve(realProviders[name]())
		os.Exit(0)
	}
	if spec := os.Getenv(testProviderEnv); spec != "" {
		if raw, ok := strings.CutPrefix(spec, "raw:"); ok {
			serveRaw(raw)
			os.Exit(0)
		}
		if name, ok := strings.CutPrefix(spec, "sdk:"); ok {
			plugin.Serve(sdkDir{name: name})
			os.Exit(0)
		}
		name, rest, _ := strings.Cut(spec, ":")
		prio, mode, _ := strings.Cut(rest, ":")
		p, _ := strconv.Atoi(prio)
		if marker := os.Getenv(startMarkerEnv); marker != "" {
			if _, err := os.Stat(marker); err != nil {
				os.Exit(3) // before the handshake: a provider that fails to start
			}
		}
		wire.Serve(testProvider{name: name, priority: p, mode: mode, describeMarker: os.Getenv(describeMarkerEnv)}, nil)
		os.Exit(0)
	}
	if os.Getenv(testHostEnv) != "" {
		os.Exit(runTestHost())
	}
	testmain.Exit(m.Run())
}

// A test provider given startMarkerEnv exits before its handshake, and one
// given describeMarkerEnv fails Describe, while the file it names does not
// exist: a provider that fails at first and works once the file is there.
const (
	startMarkerEnv    = "BROKER_TEST_START_MARKER"
	describeMarkerEnv = "BROKER_TEST_DESCRIBE_MARKER"
)

type testProvider struct {
	name           string
	priority       int
	mode           string // "" or "hang"
	describeMarker string
}

func (p testProvider) Describe(context.Context) (shared.ProviderInfo, error) {
	if p.describeMarker != "" {
		if _, err := os.Stat(p.describeMarker); err != nil {
			return shared.ProviderInfo{}, errors.New("not ready yet")
		}
	}
	return shared.ProviderInfo{Name: p.name, Version: "9.9.9", Priority: p.priority}, nil
}

// Discover reads <cwd>/rule.md through the host and offers it under a name
// every test provider shares, plus one rule of its own.
func (p testProvider) Discover(ctx context.Context, req shared.DiscoverRequest, fsys shared.HostFS, sink shared.Sink) error {
	switch p.mode {
	case "hang":
		select {} // ignores cancellation, like a provider stuck in a system call
	case "env":
		return sink.Warning(shared.Warning{Message: strings.Join(os.Environ(), " ")})
	case "spawn":
		// A child that keeps the provider's stdout and stderr, then a hang:
		// the host must neither wait for the pipes nor leave the child.
		child := exec.Command("sleep", "300")
		child.Stdout, child.Stderr = os.Stdout, os.Stderr
		if err := child.Start(); err != nil {
			return err
		}
		if err := sink.Warning(shared.Warning{Message: "child " + strconv.Itoa(child.Process.Pid)}); err != nil {
			return err
		}
		select {}
	}
	if p.mode == "list" {
		return discoverList(ctx, req, fsys, sink)
	}
	if h := hostile(p.mode); h != nil {
		return h(ctx, req, fsys, sink)
	}
	if req.Home != "" {
		if _, err := fsys.Stat(ctx, req.Home+"/rules"); err == nil {
			return sink.Rule(shared.Rule{Name: "home-rule", Path: req.Home + "/rules"})
		}
	}
	data, err := fsys.ReadFile(ctx, req.Cwd+"/rule.md", 1<<10)
	if err != nil {
		return sink.Warning(shared.Warning{Path: req.Cwd + "/rule.md", Message: err.Error()})
	}
	if err := sink.Rule(shared.Rule{Name: "shared-name", Path: "/" + p.name, Content: string(data)}); err != nil {
		return err
	}
	return sink.Rule(shared.Rule{Name: p.name + "-only", Path: "/" + p.name})
}

// discoverList offers every file in <cwd>/rules and in <dir>/rules for each
// touched directory, named after the file: a provider that lists directories.
func discoverList(ctx context.Context, req shared.DiscoverRequest, fsys shared.HostFS, sink shared.Sink) error {
	for _, dir := range append([]string{req.Cwd}, req.ExtraDirs...) {
		entries, err := fsys.ReadDir(ctx, dir+"/rules")
		if err != nil {
			continue
		}
		for _, e := range entries {
			data, err := fsys.ReadFile(ctx, dir+"/rules/"+e.Name, 1<<10)
			if err != nil {
				continue
			}
			if err := sink.Rule(shared.Rule{Name: e.Name, Path: dir + "/rules/" + e.Name, Content: string(data),
				Description: "rule " + e.Name}); err != nil {
				return err
			}
		}
	}
	return nil
}

func testBuiltin(name string, priority int, mode string) Builtin {
	return Builtin{Name: name, Env: []string{"GORACE=atexit_sleep_ms=0", testProviderEnv + "=" + name + ":" + strconv.Itoa(priority) + ":" + mode}}
}

func testFS() *workfstest.Mem {
	m := workfstest.NewMem()
	m.WriteFile("/w/rule.md", []byte("from the host"))
	return m
}

func names(rules []ruleset.Rule) []string {
	var out []string
	for _, r := range rules {
		s := r.Provider + ":" + r.Name
		if r.Shadowed {
			s += "!"
		}
		out = append(out, s)
	}
	return out
}

func TestLoadRealProcessesMergeAndRecordReads(t *testing.T) {
	t.Parallel()
	res, err := Load(context.Background(), Options{
		Timeout:  testTimeout,
		Builtins: []Builtin{testBuiltin("low", 50, ""), testBuiltin("high", 60, "")},
		FS:       testFS(),
	}, shared.DiscoverRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"high:shared-name", "high:high-only", "low:shared-name!", "low:low-only"}
	if got := names(res.Rules); !slices.Equal(got, want) {
		t.Fatalf("merge = %v, want %v", got, want)
	}
	if res.Rules[0].Content != "from the host" {
		t.Errorf("content read through HostFS = %q", res.Rules[0].Content)
	}
	for _, p := range res.Providers {
		if p.Err != nil || p.PID == 0 || p.Version != "9.9.9" || p.Origin != "builtin" || p.Rules != 2 {
			t.Errorf("provider %+v", p)
		}
		if !slices.Equal(p.Reads, []string{"/w/rule.md"}) {
			t.Errorf("%s read %v, want exactly /w/rule.md", p.Name, p.Reads)
		}
		if processAlive(p.PID) {
			t.Errorf("provider %s (pid %d) outlived Load", p.Name, p.PID)
		}
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings = %v", res.Warnings)
	}
}

func TestLoadPriorityOverride(t *testing.T) {
	t.Parallel()
	res, err := Load(context.Background(), Options{
		Timeout:  testTimeout,
		Builtins: []Builtin{testBuiltin("low", 50, ""), testBuiltin("high", 60, "")},
		FS:       testFS(),
		Priority: map[string]int{"low": 70},
	}, shared.DiscoverRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Rules); got[0] != "low:shared-name" {
		t.Fatalf("override did not reorder: %v", got)
	}
	if p := res.Providers[0]; p.Priority != 70 || p.DefaultPriority != 50 {
		t.Errorf("low = %+v", p)
	}
}

func TestLoadHungProviderCostsOnlyItself(t *testing.T) {
	t.Parallel()
	res, err := Load(context.Background(), Options{
		Builtins: []Builtin{testBuiltin("stuck", 100, "hang"), testBuiltin("fine", 50, "")},
		FS:       testFS(),
		Timeout:  3 * time.Second, // room for the well-behaved one on a loaded machine
	}, shared.DiscoverRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Rules); !slices.Equal(got, []string{"fine:shared-name", "fine:fine-only"}) {
		t.Fatalf("rules = %v", got)
	}
	stuck := res.Providers[0]
	if stuck.Err == nil || !strings.Contains(stuck.Err.Error(), "timed out after 3s") {
		t.Fatalf("stuck provider error = %v", stuck.Err)
	}
	if processAlive(stuck.PID) {
		t.Errorf("the hung provider (pid %d) outlived Load", stuck.PID)
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Source != "built-in provider stuck" ||
		!strings.Contains(res.Warnings[0].Message, "discover: timed out") {
		t.Errorf("warnings = %v", res.Warnings)
	}
}

func TestLoadWarnsAboutADuplicateProviderName(t *testing.T) {
	t.Parallel()
	res, err := Load(context.Background(), Options{
		Timeout:  testTimeout,
		Builtins: []Builtin{testBuiltin("twin", 50, ""), testBuiltin("twin", 50, "")},
		FS:       testFS(),
	}, shared.DiscoverRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Message, `provider name "twin" is also used by builtin`) {
		t.Fatalf("warnings = %v", res.Warnings)
	}
}

func TestLoadSumsUpWhatThePolicyRefused(t *testing.T) {
	t.Parallel()
	m := testFS()
	m.Mkdir("/h/rules")
	pol, err := workfs.NewPolicy(context.Background(), m, "/w")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Load(context.Background(), Options{
		Timeout:  testTimeout,
		Builtins: []Builtin{testBuiltin("one", 50, ""), testBuiltin("two", 40, "")},
		FS:       pol,
	}, shared.DiscoverRequest{Cwd: "/w", Home: "/h"})
	if err != nil {
		t.Fatal(err)
	}
	// The home rule is out of bounds; the workspace still loads.
	if got := names(res.Rules); !slices.Equal(got, []string{"one:shared-name", "one:one-only", "two:shared-name!", "two:two-only"}) {
		t.Fatalf("rules = %v", got)
	}
	if !slices.Equal(res.Providers[0].Refused, []string{"/h/rules"}) {
		t.Errorf("refused = %v", res.Providers[0].Refused)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Message, "kept 1 path(s) from the providers") ||
		!strings.Contains(res.Warnings[0].Message, "/h/rules") {
		t.Errorf("want one summary warning, got %v", res.Warnings)
	}
}

func TestLoadNeedsAFilesystem(t *testing.T) {
	t.Parallel()
	if _, err := Load(context.Background(), Options{}, shared.DiscoverRequest{}); err == nil {
		t.Fatal("Load without FS must fail")
	}
}

func processAlive(pid int) bool {
	if pid == 0 {
		return false
	}
	// A killed process whose new parent has not reaped it yet is dead.
	if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return false
		}
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func TestLoadKillsWhatAProviderStartedAndDoesNotWaitForItsPipes(t *testing.T) {
	t.Parallel()
	const timeout = 2 * time.Second
	start := time.Now()
	res, err := Load(context.Background(), Options{
		Builtins: []Builtin{testBuiltin("spawner", 50, "spawn")},
		FS:       testFS(),
		Timeout:  timeout,
	}, shared.DiscoverRequest{Cwd: "/w"})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	// A generous bound, not a timing measurement: before the process group
	// and the owned pipes, this Load never returned.
	if took > timeout+2*time.Second {
		t.Errorf("Load took %v with a %v deadline", took, timeout)
	}
	var child int
	for _, w := range res.Warnings {
		if n, ok := strings.CutPrefix(w.Message, "child "); ok {
			child, _ = strconv.Atoi(n)
		}
	}
	if child == 0 {
		t.Fatalf("the provider did not report its child: %v", res.Warnings)
	}
	// The group's SIGKILL is sent before Load returns; on a loaded machine
	// the kernel may take a moment to deliver it.
	for i := 0; processAlive(child); i++ {
		if i == 50 {
			t.Fatalf("the provider's child (pid %d) outlived Load", child)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestLoadGivesProvidersOnlyTheAllowListedEnvironment(t *testing.T) {
	t.Setenv("ACME_API_KEY", "s3cret-value")
	t.Setenv("RULEBROKER_VISIBLE", "yes")
	res, err := Load(context.Background(), Options{
		Timeout:  testTimeout,
		Builtins: []Builtin{testBuiltin("env", 50, "env")},
		FS:       testFS(),
	}, shared.DiscoverRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) == 0 {
		t.Fatal("no environment reported")
	}
	env := res.Warnings[0].Message
	if strings.Contains(env, "s3cret-value") || !strings.Contains(env, "RULEBROKER_VISIBLE=yes") ||
		strings.Contains(env, "RULEBROKER_SANDBOX_") {
		t.Errorf("provider environment: %s", env)
	}
	if p := res.Providers[0]; p.Status != StatusBuiltin || p.Sandbox == "" {
		t.Errorf("provider %+v", p)
	}
}

// thirdParty copies the test binary into a fresh plugin directory as a
// third-party provider.
func thirdParty(t *testing.T) (dir, bin string) {
	dir = t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, BinaryPrefix+"tp")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(testProviderEnv, "tp:30:")
	return dir, bin
}

func TestLoadRunsOnlyWhatTheLockTrusts(t *testing.T) {
	dir, bin := thirdParty(t)
	lockFile := filepath.Join(t.TempDir(), "plugins.lock")
	opts := Options{
		Timeout:    testTimeout,
		PluginDirs: []string{dir}, LockFile: lockFile, FS: testFS(),
		Env:       append(sandbox.DefaultEnv(), testProviderEnv),
		TrustHint: func(p string) string { return "host plugins trust " + p },
	}
	load := func() Provider {
		t.Helper()
		res, err := Load(context.Background(), opts, shared.DiscoverRequest{Cwd: "/w"})
		if err != nil || len(res.Providers) != 1 {
			t.Fatalf("Load: %v, %+v", err, res.Providers)
		}
		return res.Providers[0]
	}

	p := load()
	if p.Status != StatusRefused || p.PID != 0 || !strings.Contains(p.Err.Error(), "run: host plugins trust "+bin) {
		t.Fatalf("untrusted binary: %+v", p)
	}

	var l trust.Lock
	if _, err := trust.Trust(&l, bin, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := trust.Write(lockFile, l); err != nil {
		t.Fatal(err)
	}
	if p = load(); p.Status != StatusVerified || p.Err != nil || p.Rules != 2 || len(p.SHA256) != 64 {
		t.Fatalf("trusted binary: %+v", p)
	}

	f, err := os.OpenFile(bin, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("swapped"))
	f.Close()
	if p = load(); p.Status != StatusRefused || !strings.Contains(p.Err.Error(), "changed since it was trusted") ||
		!strings.Contains(p.Err.Error(), "host plugins trust "+bin) {
		t.Fatalf("changed binary: %+v", p)
	}

	// The developer's own directory runs without the lock.
	opts.PluginDirs, opts.DevPluginDirs = nil, []string{dir}
	if p = load(); p.Status != StatusUnverified || p.Err != nil {
		t.Fatalf("--plugin-dir binary: %+v", p)
	}
}

// testTimeout is the provider deadline of tests that are not about
// deadlines: the package's tests run in parallel beside the rest of the
// suite, and a race-built provider on a busy two-core machine can take
// longer than the default to start and discover.
const testTimeout = 30 * time.Second
