package wire

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/rulebroker/rulebroker/shared"
)

// idle is a provider that finds nothing.
type idle struct{}

func (idle) Describe(context.Context) (shared.ProviderInfo, error) {
	return shared.ProviderInfo{Name: "idle"}, nil
}
func (idle) Discover(context.Context, shared.DiscoverRequest, shared.HostFS, shared.Sink) error {
	return nil
}

type discard struct{}

func (discard) Rule(shared.Rule) error       { return nil }
func (discard) Warning(shared.Warning) error { return nil }

// hostFSServers counts the host's goroutines serving a HostFS to a plugin.
func hostFSServers() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			count := 0
			for _, g := range strings.Split(string(buf[:n]), "\n\n") {
				if strings.Contains(g, "(*GRPCBroker).AcceptAndServe(") {
					count++
				}
			}
			return count
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestDiscoverStopsItsHostFSServer checks that no HostFS server outlives the
// Discover call that started it, also when the call fails before the plugin
// ever connects (here: its context is already cancelled). Such a server would
// otherwise keep a goroutine and a listening socket until the client closes.
func TestDiscoverStopsItsHostFSServer(t *testing.T) {
	client, _ := goplugin.TestPluginGRPCConn(t, false, VersionedPlugins(idle{})[shared.ProtocolVersion])
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(shared.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	prov := raw.(shared.Provider)

	before := hostFSServers()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for range 20 {
		if err := prov.Discover(cancelled, shared.DiscoverRequest{}, nil, discard{}); err == nil {
			t.Fatal("Discover with a cancelled context succeeded")
		}
		if err := prov.Discover(context.Background(), shared.DiscoverRequest{}, nil, discard{}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for hostFSServers() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d shared.HostFS servers still running after their Discover calls returned", hostFSServers()-before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
