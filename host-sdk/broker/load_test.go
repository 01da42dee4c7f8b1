package broker

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
	"github.com/rulebroker/rulebroker/host-sdk/workfs"
	"github.com/rulebroker/rulebroker/host-sdk/workfs/workfstest"
	"github.com/rulebroker/rulebroker/internal/wire"
	"github.com/rulebroker/rulebroker/plugin"
	"github.com/rulebroker/rulebroker/shared"
)

// The test binary doubles as a provider: re-executed with testProviderEnv
// set, it serves testProvider instead of running tests. Each provider is a
// real process speaking real gRPC, as in production.
const testProviderEnv = "BROKER_TEST_PROVIDER"

func TestMain(m *testing.M) {
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
	os.Exit(m.Run())
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
	if p.mode == "hang" {
		select {} // ignores cancellation, like a provider stuck in a system call
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
	return Builtin{Name: name, Command: func() (*exec.Cmd, error) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0", testProviderEnv+"="+name+":"+strconv.Itoa(priority)+":"+mode)
		return cmd, nil
	}}
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
	res, err := Load(context.Background(), Options{
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
	res, err := Load(context.Background(), Options{
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
	res, err := Load(context.Background(), Options{
		Builtins: []Builtin{testBuiltin("stuck", 100, "hang"), testBuiltin("fine", 50, "")},
		FS:       testFS(),
		Timeout:  time.Second,
	}, shared.DiscoverRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Rules); !slices.Equal(got, []string{"fine:shared-name", "fine:fine-only"}) {
		t.Fatalf("rules = %v", got)
	}
	stuck := res.Providers[0]
	if stuck.Err == nil || !strings.Contains(stuck.Err.Error(), "timed out after 1s") {
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
	res, err := Load(context.Background(), Options{
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
	m := testFS()
	m.Mkdir("/h/rules")
	pol, err := workfs.NewPolicy(context.Background(), m, "/w")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Load(context.Background(), Options{
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
	if _, err := Load(context.Background(), Options{}, shared.DiscoverRequest{}); err == nil {
		t.Fatal("Load without FS must fail")
	}
}

func processAlive(pid int) bool {
	if pid == 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
