package wire

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rulebroker/rulebroker/shared"
	pb "github.com/rulebroker/rulebroker/shared/providerv1"
)

// scripted is a provider whose n-th discovery (from 0) does what its
// script says: "ok" sends a rule named after n; "fail" fails with a
// resource-exhausted status; "hang" waits for its context to end; "stuck"
// ignores its context and waits for release to close. It records the gRPC
// method and the context of each discovery.
type scripted struct {
	script  []string
	release chan struct{}
	mu      sync.Mutex
	n       int
	calls   []string
	ctxs    []context.Context
}

func (*scripted) Describe(context.Context) (shared.ProviderInfo, error) {
	return shared.ProviderInfo{Name: "scripted"}, nil
}

func (s *scripted) Discover(ctx context.Context, _ shared.DiscoverRequest, fsys shared.HostFS, sink shared.Sink) error {
	s.mu.Lock()
	n := s.n
	s.n++
	method, _ := grpc.Method(ctx)
	s.calls = append(s.calls, method[strings.LastIndexByte(method, '/')+1:])
	s.ctxs = append(s.ctxs, ctx)
	s.mu.Unlock()
	switch s.script[n%len(s.script)] {
	case "fail":
		return status.Error(codes.ResourceExhausted, fmt.Sprintf("discovery %d: too much", n))
	case "hang":
		<-ctx.Done()
		return ctx.Err()
	case "stuck":
		<-s.release
		return nil
	}
	if _, err := fsys.ReadFile(ctx, "/f", 100); err != nil {
		return err
	}
	return sink.Rule(shared.Rule{Name: fmt.Sprint(n)})
}

// dispensePlugin serves plugin over real gRPC in this process and returns
// the host's client for it.
func dispensePlugin(t *testing.T, plugin goplugin.Plugin) *providerClient {
	t.Helper()
	client, _ := goplugin.TestPluginGRPCConn(t, false, map[string]goplugin.Plugin{shared.PluginName: plugin})
	raw, err := client.Dispense(shared.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	prov := raw.(*providerClient)
	t.Cleanup(func() {
		prov.closeHostFS()
		client.Close()
	})
	return prov
}

// rawPlugin serves srv, a Provider server that skips the SDK, as a plugin.
type rawPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	srv pb.ProviderServer
}

func (p rawPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterProviderServer(s, p.srv)
	return nil
}

func (rawPlugin) GRPCClient(_ context.Context, broker *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return newProviderClient(c, broker), nil
}

// methods is the gRPC method of each discovery.
func (s *scripted) methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// dispense serves p over real gRPC in this process and returns the host's
// client for it, described first when describe is set.
func dispense(t *testing.T, p shared.Provider, describe bool) *providerClient {
	t.Helper()
	prov := dispensePlugin(t, VersionedPlugins(p)[shared.ProtocolVersion][shared.PluginName])
	if describe {
		info, err := prov.Describe(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(info.Capabilities, sessionCapability) {
			t.Fatalf("the wire's own capability reached the host: %v", info.Capabilities)
		}
	}
	return prov
}

// A host that learned from Describe that the provider serves sessions runs
// every discovery on one Session stream, including those that fail; one
// that did not uses a Discover call each.
func TestDiscoveriesShareOneSession(t *testing.T) {
	for _, describe := range []bool{true, false} {
		p := &scripted{script: []string{"ok", "fail", "ok"}}
		prov := dispense(t, p, describe)
		var got names
		for i := range 6 {
			err := prov.Discover(context.Background(), shared.DiscoverRequest{}, oneFile{"f"}, &got)
			if i%3 == 1 {
				var we *Error
				if !errors.As(err, &we) || we.Kind != ErrTooLarge || !strings.Contains(err.Error(), fmt.Sprintf("discovery %d: too much", i)) {
					t.Fatalf("describe=%v: discovery %d: err = %v, want the provider's resource-exhausted status", describe, i, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("describe=%v: discovery %d: %v", describe, i, err)
			}
		}
		if !slices.Equal(got, names{"0", "2", "3", "5"}) {
			t.Errorf("describe=%v: rules %v", describe, got)
		}
		methods, opened := p.methods(), prov.sessionsOpened.Load()
		want, wantOpened := "Session", int64(1)
		if !describe {
			want, wantOpened = "Discover", 0
		}
		for _, m := range methods {
			if m != want {
				t.Fatalf("describe=%v: methods %v, want %s each time", describe, methods, want)
			}
		}
		if opened != wantOpened {
			t.Errorf("describe=%v: %d sessions opened for 6 discoveries, want %d", describe, opened, wantOpened)
		}
	}
}

// A discovery that outlives its deadline fails with a timeout, and the
// provider's discovery ends too: the provider has the deadline, and the
// host ends the session when the deadline passes first. The next discovery
// works.
func TestSessionDiscoveryThatTimesOut(t *testing.T) {
	for _, script := range []string{"hang", "stuck"} {
		p := &scripted{script: []string{"ok", script}, release: make(chan struct{})}
		prov := dispense(t, p, true)
		var got names
		ctx := context.Background()
		if err := prov.Discover(ctx, shared.DiscoverRequest{}, oneFile{"f"}, &got); err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := prov.Discover(short, shared.DiscoverRequest{}, oneFile{"f"}, &got)
		cancel()
		var we *Error
		if !errors.As(err, &we) || we.Kind != ErrTimeout {
			t.Fatalf("%s discovery: err = %v, want a timeout", script, err)
		}
		if err := prov.Discover(ctx, shared.DiscoverRequest{}, oneFile{"f"}, &got); err != nil {
			t.Fatalf("the discovery after a %s one: %v", script, err)
		}
		if !slices.Equal(got, names{"0", "2"}) {
			t.Errorf("%s: rules %v", script, got)
		}
		p.mu.Lock()
		late := p.ctxs[1]
		p.mu.Unlock()
		if late.Err() == nil {
			t.Errorf("%s: the provider's discovery did not end", script)
		}
		// A provider that ignores its deadline gets its session ended by
		// the host, and the next discovery opens a new one.
		if n := prov.sessionsOpened.Load(); script == "stuck" && n != 2 {
			t.Errorf("stuck: %d sessions opened, want 2: the one given up and a new one", n)
		}
		close(p.release)
	}
}

// refuse is a sink that refuses every rule.
type refuse struct{}

var errRefused = errors.New("the host refuses this rule")

func (refuse) Rule(shared.Rule) error       { return errRefused }
func (refuse) Warning(shared.Warning) error { return nil }

// A sink that refuses a finding ends the discovery with its error; the
// findings still in flight cannot leak into the next discovery.
func TestSessionSinkRefusal(t *testing.T) {
	p := &scripted{script: []string{"ok"}}
	prov := dispense(t, p, true)
	ctx := context.Background()
	if err := prov.Discover(ctx, shared.DiscoverRequest{}, oneFile{"f"}, refuse{}); !errors.Is(err, errRefused) {
		t.Fatalf("err = %v, want the sink's", err)
	}
	var got names
	if err := prov.Discover(ctx, shared.DiscoverRequest{}, oneFile{"f"}, &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, names{"1"}) {
		t.Errorf("rules %v, want only the second discovery's", got)
	}
}

// sessionless names the session capability but serves only Describe and
// Discover, as a provider not built on this SDK might.
type sessionless struct {
	pb.UnimplementedProviderServer
	discovers *atomic.Int32
}

func (sessionless) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	return &pb.DescribeResponse{Name: "sessionless", Capabilities: []string{sessionCapability}}, nil
}

func (s sessionless) Discover(*pb.DiscoverRequest, grpc.ServerStreamingServer[pb.DiscoverResponse]) error {
	s.discovers.Add(1)
	return nil
}

// A provider that names the capability but does not serve Session still
// gets its discoveries, as Discover calls, from the first one on.
func TestNoSessionFallsBackToDiscover(t *testing.T) {
	srv := sessionless{discovers: &atomic.Int32{}}
	prov := dispensePlugin(t, rawPlugin{srv: srv})
	if _, err := prov.Describe(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := prov.Discover(context.Background(), shared.DiscoverRequest{}, oneFile{}, discard{}); err != nil {
			t.Fatalf("discovery %d: %v", i, err)
		}
	}
	if n := srv.discovers.Load(); n != 3 {
		t.Errorf("%d Discover calls for 3 discoveries", n)
	}
}

// deadlined fails a discovery that has no deadline, or one far from the
// host's.
type deadlined struct{}

func (deadlined) Describe(context.Context) (shared.ProviderInfo, error) {
	return shared.ProviderInfo{Name: "deadlined"}, nil
}

func (deadlined) Discover(ctx context.Context, _ shared.DiscoverRequest, _ shared.HostFS, _ shared.Sink) error {
	deadline, ok := ctx.Deadline()
	if left := time.Until(deadline); !ok || left > time.Minute || left < 30*time.Second {
		return fmt.Errorf("deadline %v away (set: %v), want about a minute", left, ok)
	}
	return nil
}

// A discovery on a session has the host's deadline, as a Discover call has.
func TestSessionDiscoveryHasTheHostsDeadline(t *testing.T) {
	for _, session := range []bool{false, true} {
		prov := dispense(t, deadlined{}, session)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := prov.Discover(ctx, shared.DiscoverRequest{}, oneFile{}, discard{})
		cancel()
		if err != nil {
			t.Errorf("session=%v: %v", session, err)
		}
	}
}
