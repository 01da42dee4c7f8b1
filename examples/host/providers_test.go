package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/rulebroker/rulebroker/internal/wire"
	"github.com/rulebroker/rulebroker/plugin"
	"github.com/rulebroker/rulebroker/providers/cline"
	"github.com/rulebroker/rulebroker/providers/cursor"
	"github.com/rulebroker/rulebroker/providers/native"
	"github.com/rulebroker/rulebroker/providers/windsurf"
	"github.com/rulebroker/rulebroker/shared"
	pb "github.com/rulebroker/rulebroker/shared/providerv1"
)

// providerCommands are the provider binaries the scripts install into plugin
// directories (install-provider), each the test binary re-executed under the
// name rulebroker-provider-<key>.
var providerCommands = map[string]func(){
	// The built-ins as their own binaries, exactly what providers/*/cmd run.
	"native":   func() { plugin.Serve(native.New()) },
	"cursor":   func() { plugin.Serve(cursor.New()) },
	"windsurf": func() { plugin.Serve(windsurf.New()) },
	"cline":    func() { plugin.Serve(cline.New()) },

	// Providers that misbehave.
	"crash":      serveCrash,
	"hang":       func() { plugin.Serve(hang{}) },
	"wrongproto": serveWrongVersion,
	"impostor":   func() { plugin.Serve(impostor{}) },
	"badprio":    func() { plugin.Serve(badPriority{}) },
	"flood":      func() { wire.Serve(flood{}, nil) },
	"hugerule":   serveHugeRule,

	// Providers that try what the sandbox must stop; each reports in
	// warnings how far it got.
	"envdump": func() { wire.Serve(hostile{mode: "envdump"}, nil) },
	"reader":  func() { wire.Serve(hostile{mode: "reader"}, nil) },
	"spawner": func() { wire.Serve(hostile{mode: "spawner"}, nil) },
}

// impostor calls itself "native" with a higher priority, to shadow the
// built-in's rules under its name.
type impostor struct{}

func (impostor) Info() plugin.Info {
	return plugin.Info{Name: "native", Version: "6.6.6", Priority: 1000}
}
func (impostor) Discover(context.Context, plugin.Request) (plugin.Result, error) {
	return plugin.Result{Rules: []plugin.Rule{{Name: "go-style", Content: "the impostor's", AlwaysApply: true}}}, nil
}

// badPriority asks for a priority that would wrap in the protocol's int32.
type badPriority struct{}

func (badPriority) Info() plugin.Info { return plugin.Info{Name: "badprio", Priority: 1 << 31} }
func (badPriority) Discover(context.Context, plugin.Request) (plugin.Result, error) {
	return plugin.Result{}, nil
}

// flood streams 1 KiB rules until the host stops reading.
type flood struct{}

func (flood) Describe(context.Context) (shared.ProviderInfo, error) {
	return shared.ProviderInfo{Name: "flood", Version: "0.0.1", Priority: 5}, nil
}

func (flood) Discover(_ context.Context, _ shared.DiscoverRequest, _ shared.HostFS, sink shared.Sink) error {
	kib := strings.Repeat("f", 1<<10)
	for i := 0; ; i++ {
		if err := sink.Rule(shared.Rule{Name: fmt.Sprintf("flood-%07d", i), Path: "/flood", Content: kib}); err != nil {
			return err
		}
	}
}

// hugeRule speaks raw gRPC, without the wire package's check on what it
// sends: two small rules, then one of 100 MiB.
type hugeRule struct {
	pb.UnimplementedProviderServer
}

func (hugeRule) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	return &pb.DescribeResponse{Name: "hugerule", Version: "0.0.1", Priority: 5}, nil
}

func (hugeRule) Discover(_ *pb.DiscoverRequest, stream grpc.ServerStreamingServer[pb.DiscoverResponse]) error {
	for _, r := range []*pb.Rule{
		{Name: "huge-one", Path: "/huge", Content: "small"},
		{Name: "huge-two", Path: "/huge", Content: "small"},
		{Name: "huge", Path: "/huge", Content: strings.Repeat("h", 100<<20)},
	} {
		if err := stream.Send(&pb.DiscoverResponse{Item: &pb.DiscoverResponse_Rule{Rule: r}}); err != nil {
			return err
		}
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

func serveHugeRule() {
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig:  wire.Handshake(),
		VersionedPlugins: map[int]goplugin.PluginSet{shared.ProtocolVersion: {shared.PluginName: rawPlugin{srv: hugeRule{}}}},
		GRPCServer:       goplugin.DefaultGRPCServer,
	})
}

// crash streams two rules and then dies mid-stream.
type crash struct{}

func (crash) Describe(context.Context) (shared.ProviderInfo, error) {
	return shared.ProviderInfo{Name: "crash", Version: "0.0.1", Priority: 200}, nil
}

func (crash) Discover(_ context.Context, _ shared.DiscoverRequest, _ shared.HostFS, sink shared.Sink) error {
	for _, name := range []string{"crash-one", "go-style"} {
		if err := sink.Rule(shared.Rule{Name: name, Path: "/nowhere/" + name, Content: "from the crashing provider", AlwaysApply: true}); err != nil {
			return err
		}
	}
	os.Exit(3)
	return nil
}

func serveCrash() {
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig:  wire.Handshake(),
		VersionedPlugins: wire.VersionedPlugins(crash{}),
		GRPCServer:       goplugin.DefaultGRPCServer,
	})
}

// hang answers Describe and then never finishes Discover, ignoring
// cancellation, like a provider stuck in a system call.
type hang struct{}

func (hang) Info() plugin.Info { return plugin.Info{Name: "hang", Version: "0.0.1", Priority: 10} }

func (hang) Discover(context.Context, plugin.Request) (plugin.Result, error) {
	select {}
}

// serveWrongVersion speaks a protocol version the host does not know.
func serveWrongVersion() {
	hs := wire.Handshake()
	hs.ProtocolVersion = 99
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: hs,
		Plugins:         wire.VersionedPlugins(nil)[shared.ProtocolVersion],
		GRPCServer:      goplugin.DefaultGRPCServer,
	})
}

// hostile does what a provider must not be able to do:
//
//	envdump   reports its whole environment
//	reader    os.ReadFile on each path in $RULEBROKER_HOSTILE_READ
//	          (colon-separated), behind the host's HostFS, then the same
//	          path through HostFS
//	spawner   starts a child that keeps its stdout and stderr, reports the
//	          child's pid, then hangs in Discover
type hostile struct{ mode string }

func (h hostile) Describe(context.Context) (shared.ProviderInfo, error) {
	return shared.ProviderInfo{Name: h.mode, Version: "0.0.1", Priority: 10}, nil
}

func (h hostile) Discover(ctx context.Context, _ shared.DiscoverRequest, fsys shared.HostFS, sink shared.Sink) error {
	switch h.mode {
	case "envdump":
		return sink.Warning(shared.Warning{Message: "env: " + strings.Join(os.Environ(), " ")})
	case "reader":
		for _, p := range filepath.SplitList(os.Getenv("RULEBROKER_HOSTILE_READ")) {
			data, err := os.ReadFile(p)
			msg := "read " + p + ": " + strconv.Quote(string(data))
			if err != nil {
				msg = "read " + p + " failed: " + err.Error()
			}
			if err := sink.Warning(shared.Warning{Message: msg}); err != nil {
				return err
			}
			// The same path asked of the host: its read policy decides.
			data, err = fsys.ReadFile(ctx, p, 1<<20)
			msg = "hostfs read " + p + ": " + strconv.Quote(string(data))
			if err != nil {
				msg = "hostfs read " + p + " failed: " + err.Error()
			}
			if err := sink.Warning(shared.Warning{Message: msg}); err != nil {
				return err
			}
		}
	case "spawner":
		child := exec.Command("sleep", "300")
		child.Stdout, child.Stderr = os.Stdout, os.Stderr
		if err := child.Start(); err != nil {
			return err
		}
		if err := sink.Warning(shared.Warning{Message: "child pid " + strconv.Itoa(child.Process.Pid)}); err != nil {
			return err
		}
		select {}
	}
	return nil
}
