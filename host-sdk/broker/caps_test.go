package broker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/rulebroker/rulebroker/host-sdk/sandbox"
	"github.com/rulebroker/rulebroker/internal/wire"
	"github.com/rulebroker/rulebroker/plugin"
	"github.com/rulebroker/rulebroker/shared"
	pb "github.com/rulebroker/rulebroker/shared/providerv1"
)

// The hostile providers here are real processes (the test binary
// re-executed), as in production. Those that break the protocol's own
// rules — a message larger than the host accepts, a priority the SDK would
// refuse to send — speak raw gRPC through go-plugin, with none of the SDK's
// or the wire package's checks on their side.

// testHostEnv re-executes the test binary as a host that loads a flooding
// and an oversized provider with the default caps and prints its peak RSS.
const testHostEnv = "BROKER_TEST_HOST"

// hostile returns the Discover of a test provider mode served through the
// wire package (so its sink repairs and checks what it sends), or nil.
func hostile(mode string) func(context.Context, shared.DiscoverRequest, shared.HostFS, shared.Sink) error {
	switch mode {
	case "latin1":
		return func(_ context.Context, _ shared.DiscoverRequest, _ shared.HostFS, sink shared.Sink) error {
			for _, r := range []shared.Rule{
				{Name: "a", Path: "/w/a.md", Content: "fine"},
				{Name: "b", Path: "/w/b.md", Content: "caf\xe9", Description: "d\xff"},
				{Name: "c", Path: "/w/c.md", Content: "also fine"},
			} {
				if err := sink.Rule(r); err != nil {
					return err
				}
			}
			return nil
		}
	case "bigrule":
		// One rule over the host's limit between two that fit: the wire
		// turns it into a warning instead of breaking the stream.
		return func(_ context.Context, req shared.DiscoverRequest, _ shared.HostFS, sink shared.Sink) error {
			for _, r := range []shared.Rule{
				{Name: "a", Path: "/w/a.md", Content: "fine"},
				{Name: "big", Path: "/w/big.md", Content: strings.Repeat("x", int(req.MaxRuleBytes)+wire.MetadataBytes)},
				{Name: "c", Path: "/w/c.md", Content: "fine"},
			} {
				if err := sink.Rule(r); err != nil {
					return err
				}
			}
			return nil
		}
	case "many":
		return func(ctx context.Context, _ shared.DiscoverRequest, _ shared.HostFS, sink shared.Sink) error {
			for i := 0; ; i++ {
				if err := sink.Rule(shared.Rule{Name: fmt.Sprintf("r%d", i), Content: "x"}); err != nil {
					return err
				}
			}
		}
	case "bigbatch":
		// A batch the SDK would have split: the host refuses the request,
		// the provider says nothing of it and reports success.
		return func(ctx context.Context, _ shared.DiscoverRequest, fsys shared.HostFS, sink shared.Sink) error {
			paths := make([]string, 230_000) // 20 bytes each: past the 4 MiB request limit
			for i := range paths {
				paths[i] = fmt.Sprintf("/w/rules/r-%08d.md", i)
			}
			_, _ = fsys.ReadFiles(ctx, paths, 1<<10)
			return sink.Rule(shared.Rule{Name: "after", Content: "x"})
		}
	case "amplify":
		// One small request naming a 3 MiB file 300 times.
		return func(ctx context.Context, _ shared.DiscoverRequest, fsys shared.HostFS, sink shared.Sink) error {
			files, err := fsys.ReadFiles(ctx, slices.Repeat([]string{"/w/big"}, 300), 3<<20)
			if err != nil {
				return err
			}
			read, over := 0, 0
			for _, f := range files {
				switch {
				case f.Err == nil && len(f.Data) == 3<<20:
					read++
				case errors.Is(f.Err, wire.ErrOverBudget):
					over++
				}
			}
			return sink.Rule(shared.Rule{Name: "count", Content: fmt.Sprintf("%d %d %d", len(files), read, over)})
		}
	}
	return nil
}

// sdkDir is a provider written with the SDK: every .md file in <cwd>/d.
type sdkDir struct{ name string }

func (p sdkDir) Info() plugin.Info { return plugin.Info{Name: p.name, Version: "1", Priority: 10} }
func (p sdkDir) Discover(_ context.Context, req plugin.Request) (plugin.Result, error) {
	rules, warnings := plugin.LoadRules(req.FS, path.Join(req.Cwd, "d"), plugin.LevelProject, ".md")
	return plugin.Result{Rules: rules, Warnings: warnings}, nil
}

func sdkBuiltin(name string) Builtin {
	return Builtin{Name: name, Env: []string{"GORACE=atexit_sleep_ms=0", testProviderEnv + "=sdk:" + name}}
}

// rawProvider speaks the protocol without the SDK's or the wire's checks.
type rawProvider struct {
	pb.UnimplementedProviderServer
	name     string
	version  string
	priority int32
	mode     string // "flood": endless 1 KiB rules; "huge": three rules, then one of 100 MiB
}

func (p rawProvider) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	return &pb.DescribeResponse{Name: p.name, Version: p.version, Priority: p.priority}, nil
}

func (p rawProvider) Discover(_ *pb.DiscoverRequest, stream grpc.ServerStreamingServer[pb.DiscoverResponse]) error {
	send := func(name, content string) error {
		return stream.Send(&pb.DiscoverResponse{Item: &pb.DiscoverResponse_Rule{Rule: &pb.Rule{Name: name, Content: content}}})
	}
	switch p.mode {
	case "flood":
		kib := strings.Repeat("f", 1<<10)
		for i := 0; ; i++ {
			if err := send(fmt.Sprintf("flood-%d", i), kib); err != nil {
				return err
			}
		}
	case "huge":
		for _, n := range []string{"one", "two", "three"} {
			if err := send(n, "small"); err != nil {
				return err
			}
		}
		return send("huge", strings.Repeat("h", 100<<20))
	case "2mib":
		if err := send("small", "small"); err != nil {
			return err
		}
		return send("big", strings.Repeat("b", 2<<20))
	}
	return nil
}

type rawPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	srv pb.ProviderServer
}

func (p rawPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterProviderServer(s, p.srv)
	return nil
}

func (rawPlugin) GRPCClient(context.Context, *goplugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("server side only")
}

// serveRaw serves "name:priority:mode[:versionBytes]".
func serveRaw(spec string) {
	parts := strings.Split(spec, ":")
	for len(parts) < 4 {
		parts = append(parts, "")
	}
	prio, _ := strconv.ParseInt(parts[1], 10, 32)
	vlen, _ := strconv.Atoi(parts[3])
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: wire.Handshake(),
		VersionedPlugins: map[int]goplugin.PluginSet{shared.ProtocolVersion: {shared.PluginName: rawPlugin{srv: rawProvider{
			name: parts[0], priority: int32(prio), mode: parts[2], version: strings.Repeat("v", vlen)}}}},
		GRPCServer: goplugin.DefaultGRPCServer,
	})
}

func rawBuiltin(name, spec string) Builtin {
	return Builtin{Name: name, Env: []string{"GORACE=atexit_sleep_ms=0", testProviderEnv + "=raw:" + spec}}
}

// runTestHost is the host process of TestHostPeakRSSAgainstFloodAndHugeRule:
// it prints the rules each provider kept, the warnings, and its own VmHWM.
func runTestHost() int {
	res, err := Load(context.Background(), Options{
		Builtins: []Builtin{rawBuiltin("flood", "flood:10:flood"), rawBuiltin("huge", "huge:10:huge")},
		FS:       testFS(),
		Timeout:  20e9,
	}, shared.DiscoverRequest{Cwd: "/w"})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	for _, p := range res.Providers {
		fmt.Printf("provider %s rules=%d partial=%q err=%v\n", p.Name, p.Rules, p.Partial, p.Err)
	}
	for _, w := range res.Warnings {
		fmt.Println("warning:", w)
	}
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "VmHWM:") {
			fmt.Println(sc.Text())
		}
	}
	return 0
}

func TestLoadCutsAProviderAtTheRulesCap(t *testing.T) {
	t.Parallel()
	res, err := Load(context.Background(), Options{
		Timeout:             testTimeout,
		Builtins:            []Builtin{testBuiltin("many", 10, "many"), testBuiltin("fine", 5, "")},
		FS:                  testFS(),
		MaxRulesPerProvider: 1000,
	}, shared.DiscoverRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	many := res.Providers[0]
	if many.Err != nil || many.Rules != 1000 || !strings.Contains(many.Partial, "rules per provider (1000)") {
		t.Fatalf("many = %+v", many)
	}
	if res.Providers[1].Rules != 2 {
		t.Errorf("the other provider lost rules: %+v", res.Providers[1])
	}
	var capWarnings int
	for _, w := range res.Warnings {
		if strings.Contains(w.Message, "over the cap on rules per provider (1000)") && w.Source == "many" {
			capWarnings++
		}
	}
	if capWarnings != 1 {
		t.Errorf("want one warning naming the cap, got %v", res.Warnings)
	}
}

func TestLoadCutsAProviderAtTheBytesCap(t *testing.T) {
	t.Parallel()
	res, err := Load(context.Background(), Options{
		Timeout:          testTimeout,
		Builtins:         []Builtin{rawBuiltin("flood", "flood:10:flood")},
		FS:               testFS(),
		MaxProviderBytes: 1 << 20,
	}, shared.DiscoverRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Providers[0]
	if p.Err != nil || p.Rules == 0 || p.Rules > 1<<10 || !strings.Contains(p.Partial, "bytes per provider (1048576)") {
		t.Fatalf("flood = %+v", p)
	}
	if len(res.Rules) != p.Rules || len(res.Warnings) != 1 {
		t.Fatalf("%d rules kept, warnings %v", len(res.Rules), res.Warnings)
	}
}

func TestLoadOversizedMessageKeepsWhatCameBefore(t *testing.T) {
	t.Parallel()
	res, err := Load(context.Background(), Options{
		Builtins: []Builtin{rawBuiltin("huge", "huge:10:huge"), testBuiltin("fine", 5, "")},
		FS:       testFS(),
		Timeout:  30 * time.Second, // the provider builds and marshals 100 MiB; slow under -race
	}, shared.DiscoverRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Providers[0]
	if p.Err != nil || p.Rules != 3 || !strings.Contains(p.Partial, "bytes per rule") {
		t.Fatalf("huge = %+v", p)
	}
	if !slices.Equal(names(res.Rules), []string{"huge:one", "huge:two", "huge:three", "fine:shared-name", "fine:fine-only"}) {
		t.Fatalf("rules = %v", names(res.Rules))
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Message, "over the cap on bytes per rule (4194304, plus 65536 for metadata)") {
		t.Fatalf("warnings = %v", res.Warnings)
	}
}

// A rule under gRPC's limit (never below 4 MiB) but over a smaller per-rule
// cap is caught by the host's own check.
func TestLoadRuleOverASmallerCap(t *testing.T) {
	t.Parallel()
	res, err := Load(context.Background(), Options{
		Timeout:      testTimeout,
		Builtins:     []Builtin{rawBuiltin("twomib", "twomib:10:2mib")},
		FS:           testFS(),
		MaxRuleBytes: 1 << 20,
	}, shared.DiscoverRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Providers[0]; p.Err != nil || p.Rules != 1 || p.Partial != "over the cap on bytes per rule (1048576, plus 65536 for metadata)" {
		t.Fatalf("provider = %+v", p)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Message, `rule "big" is 2097155 bytes`) {
		t.Fatalf("warnings = %v", res.Warnings)
	}
}

func TestLoadRuleOverTheLimitIsAWarningNotABrokenStream(t *testing.T) {
	t.Parallel()
	res, err := Load(context.Background(), Options{
		Timeout:      testTimeout,
		Builtins:     []Builtin{testBuiltin("big", 10, "bigrule")},
		FS:           testFS(),
		MaxRuleBytes: 1 << 20,
	}, shared.DiscoverRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Rules); !slices.Equal(got, []string{"big:a", "big:c"}) || res.Providers[0].Partial != "" {
		t.Fatalf("rules = %v, provider %+v", got, res.Providers[0])
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Path != "/w/big.md" || !strings.Contains(res.Warnings[0].Message, "over the host's limit of 1114112") {
		t.Fatalf("warnings = %v", res.Warnings)
	}
}

func TestHostPeakRSSAgainstFloodAndHugeRule(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("moves ~100 MiB through gRPC; measured without -race and -short")
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), testHostEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		`partial="over the cap on bytes per provider (67108864)"`,
		`provider huge rules=3 partial="over the cap on bytes per rule`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	// The flood keeps what it delivered within the caps: some rules, not none.
	if !regexp.MustCompile(`provider flood rules=[1-9]`).MatchString(text) {
		t.Errorf("the flooding provider kept no rules:\n%s", text)
	}
	i := strings.Index(text, "VmHWM:")
	if i < 0 {
		t.Fatalf("no VmHWM:\n%s", text)
	}
	kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(strings.Fields(text[i:])[1]), "kB"))
	if err != nil {
		t.Fatal(err)
	}
	// The bytes-per-provider cap (64 MiB) holds the flood's rules, which
	// the garbage collector's headroom doubles; the 100 MiB rule is refused
	// by gRPC unread. Measured: about 185 MiB. Without the caps the host
	// took ~1.2 GB in 5 s.
	const limit = 300 << 10
	t.Logf("host peak RSS %d MiB (limit %d MiB)", kb>>10, limit>>10)
	if kb > limit {
		t.Errorf("host peak RSS %d kB, over %d kB", kb, limit)
	}
}

func TestLoadRepairsInvalidUTF8AndNamesTheFile(t *testing.T) {
	t.Parallel()
	res, err := Load(context.Background(), Options{
		Timeout:  testTimeout,
		Builtins: []Builtin{testBuiltin("latin", 10, "latin1")},
		FS:       testFS(),
	}, shared.DiscoverRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Rules); !slices.Equal(got, []string{"latin:a", "latin:b", "latin:c"}) || res.Providers[0].Partial != "" {
		t.Fatalf("rules = %v", got)
	}
	if res.Rules[1].Content != "caf\uFFFD" || res.Rules[1].Description != "d\uFFFD" {
		t.Errorf("repaired rule = %+v", res.Rules[1])
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Path != "/w/b.md" || res.Warnings[0].Source != "latin" ||
		!strings.Contains(res.Warnings[0].Message, "content, description not valid UTF-8") {
		t.Errorf("warnings = %v", res.Warnings)
	}
}

func TestLoadSkipsADirectoryEntryThatIsNotUTF8(t *testing.T) {
	t.Parallel()
	m := testFS()
	m.WriteFile("/w/d/ok.md", []byte("ok"))
	m.WriteFile("/w/d/\xe9t\xe9.md", []byte("latin-1 name"))
	m.WriteFile("/w/d/z.md", []byte("z"))
	res, err := Load(context.Background(), Options{Timeout: testTimeout, Builtins: []Builtin{sdkBuiltin("sdk")}, FS: m}, shared.DiscoverRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Rules); !slices.Equal(got, []string{"sdk:ok", "sdk:z"}) {
		t.Fatalf("rules = %v, warnings %v, providers %+v", got, res.Warnings, res.Providers)
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Source != "sdk" || res.Warnings[0].Path != "/w/d" ||
		!strings.Contains(res.Warnings[0].Message, `"\xe9t\xe9.md"`) {
		t.Errorf("warnings = %v", res.Warnings)
	}
}

func TestAFailedHostFSCallIsNeverOK(t *testing.T) {
	t.Parallel()
	res, err := Load(context.Background(), Options{Builtins: []Builtin{testBuiltin("batch", 10, "bigbatch")}, FS: testFS(),
		Timeout: 30 * time.Second}, // building and marshalling the batch is slow under -race
		shared.DiscoverRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Providers[0]
	if p.Err != nil || p.Rules != 1 || p.Partial != "a read of the host's files failed" {
		t.Fatalf("provider = %+v", p)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Message, "1 call(s) to the host's filesystem failed in transport") ||
		!strings.Contains(res.Warnings[0].Message, "larger than max") {
		t.Fatalf("warnings = %v", res.Warnings)
	}
}

func TestHostFSBudgetAnswersAnAmplifiedReadInPart(t *testing.T) {
	t.Parallel()
	m := testFS()
	m.WriteFile("/w/big", make([]byte, 3<<20))
	m.ResetCounts()
	res, err := Load(context.Background(), Options{Timeout: testTimeout, Builtins: []Builtin{testBuiltin("amp", 10, "amplify")}, FS: m},
		shared.DiscoverRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rules) != 1 {
		t.Fatalf("rules = %v, warnings %v", names(res.Rules), res.Warnings)
	}
	// 16 MiB of budget holds five 3 MiB answers; the other 295 are errors.
	if got := res.Rules[0].Content; got != "300 5 295" {
		t.Errorf("answered, read, over budget = %s; want 300 5 295", got)
	}
	if c := m.Counts(); c.ReadFile > 6 {
		t.Errorf("the host read the file %d times", c.ReadFile)
	}
}

func TestSDKReadsPastTheBudgetInLaterCalls(t *testing.T) {
	t.Parallel()
	m := testFS()
	for i := range 10 {
		m.WriteFile(fmt.Sprintf("/w/d/r%d.md", i), []byte(strings.Repeat("x", 1<<20)))
	}
	// Every call's budget holds two files; the SDK asks again for the rest.
	res, err := Load(context.Background(), Options{
		Timeout:  testTimeout,
		Builtins: []Builtin{sdkBuiltin("sdk")}, FS: m, MaxRuleBytes: 2 << 20, HostFSCallBudget: 2<<20 + 100,
	}, shared.DiscoverRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rules) != 10 || len(res.Warnings) != 0 || res.Providers[0].Partial != "" {
		t.Fatalf("rules = %v, warnings %v", names(res.Rules), res.Warnings)
	}
}

func TestDescribeIsValidated(t *testing.T) {
	t.Parallel()
	res, err := Load(context.Background(), Options{
		Timeout: testTimeout,
		Builtins: []Builtin{
			testBuiltin("white space", 10, ""),
			testBuiltin("Upper", 10, ""),
			testBuiltin("wraps", 1<<31, ""),
			testBuiltin("toohigh", 1_000_001, ""),
			rawBuiltin("rawhigh", "rawhigh:2147483647:"),
			rawBuiltin("rawlow", "rawlow:-2147483648:"),
			rawBuiltin("longversion", "longversion:1::"+strconv.Itoa(3<<20)),
			testBuiltin("fine", -1_000_000, ""),
		},
		FS: testFS(),
	}, shared.DiscoverRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`provider name "white space" is not valid`,
		`provider name "Upper" is not valid`,
		`priority 2147483648 does not fit the protocol's 32 bits`,
		`priority 1000001 is out of range`,
		`refused: priority 2147483647 is out of range`,
		`refused: priority -2147483648 is out of range`,
		`refused: version is 3145728 bytes long, over the limit of 64`,
	}
	for i, w := range want {
		if p := res.Providers[i]; p.Err == nil || !strings.Contains(p.Err.Error(), w) {
			t.Errorf("provider %d: err = %v, want %q", i, p.Err, w)
		}
	}
	if p := res.Providers[len(want)]; p.Err != nil || p.Priority != -1_000_000 {
		t.Errorf("fine = %+v", p)
	}
}

func TestThirdPartyMayNotTakeABuiltinsName(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(os.Args[0], filepath.Join(dir, "rulebroker-provider-impostor")); err != nil {
		t.Fatal(err)
	}
	// The third party inherits this; the built-in sets its own.
	t.Setenv(testProviderEnv, "native:999:")
	for _, allow := range []bool{false, true} {
		res, err := Load(context.Background(), Options{
			Timeout:           testTimeout,
			Builtins:          []Builtin{testBuiltin("native", 100, "")},
			DevPluginDirs:     []string{dir},
			Env:               append(sandbox.DefaultEnv(), testProviderEnv),
			FS:                testFS(),
			AllowBuiltinNames: allow,
		}, shared.DiscoverRequest{Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		third := res.Providers[1]
		if !allow {
			if third.Err == nil || !strings.Contains(third.Err.Error(), `calls itself "native", the name of a built-in provider`) {
				t.Fatalf("impostor = %+v", third)
			}
			if got := names(res.Rules); !slices.Equal(got, []string{"native:shared-name", "native:native-only"}) || res.Providers[0].Rules != 2 {
				t.Fatalf("rules = %v", got)
			}
			continue
		}
		if third.Err != nil || third.Priority != 999 {
			t.Fatalf("allowed impostor = %+v", third)
		}
	}
}
