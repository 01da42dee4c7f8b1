package wire

import (
	"context"
	"fmt"
	"io/fs"
	"runtime"
	"slices"
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

// TestDiscoverKeepsOneHostFSServer checks that a provider connection
// brokers one HostFS server and the plugin opens one connection to it for
// all its Discover calls, also those that fail before the plugin connects
// (here: their context is already cancelled), and that closing the
// connection stops the server, which would otherwise keep a goroutine and a
// listening socket.
func TestDiscoverKeepsOneHostFSServer(t *testing.T) {
	client, _ := goplugin.TestPluginGRPCConn(t, false, VersionedPlugins(reader{})[shared.ProtocolVersion])
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(shared.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	prov := raw.(*providerClient)

	before := hostFSServers()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 20 {
		if err := prov.Discover(cancelled, shared.DiscoverRequest{}, nil, discard{}); err == nil {
			t.Fatal("Discover with a cancelled context succeeded")
		}
		if err := prov.Discover(context.Background(), shared.DiscoverRequest{Cwd: fmt.Sprint(i)}, oneFile{}, discard{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := hostFSServers() - before; n != 1 {
		t.Errorf("%d HostFS servers running, want 1 for the connection's life", n)
	}
	if n := prov.fsConns.Load(); n != 1 {
		t.Errorf("the plugin opened %d connections to the host's filesystem over 20 Discover calls, want 1", n)
	}
	prov.closeHostFS()
	deadline := time.Now().Add(5 * time.Second)
	for hostFSServers() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d HostFS servers still running after the connection closed", hostFSServers()-before)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := prov.Discover(context.Background(), shared.DiscoverRequest{}, oneFile{}, discard{}); err == nil {
		t.Fatal("Discover after the connection closed succeeded")
	}
}

// reader reads /f through the host on each Discover.
type reader struct{}

func (reader) Describe(context.Context) (shared.ProviderInfo, error) {
	return shared.ProviderInfo{Name: "reader"}, nil
}

func (reader) Discover(ctx context.Context, _ shared.DiscoverRequest, fsys shared.HostFS, _ shared.Sink) error {
	_, err := fsys.ReadFile(ctx, "/f", 100)
	return err
}

// oneFile is a filesystem holding /f, whose content names the filesystem.
type oneFile struct{ name string }

func (f oneFile) Stat(_ context.Context, p string) (shared.FileInfo, error) {
	if p != "/f" {
		return shared.FileInfo{}, fmt.Errorf("stat %s: %w", p, fs.ErrNotExist)
	}
	return shared.FileInfo{Name: "f", Size: int64(len(f.name))}, nil
}
func (f oneFile) Resolve(_ context.Context, p string) (string, error) { return p, nil }
func (f oneFile) ReadDir(context.Context, string) ([]shared.DirEntry, error) {
	return []shared.DirEntry{{Name: "f"}}, nil
}
func (f oneFile) ReadFile(ctx context.Context, p string, _ int64) ([]byte, error) {
	if _, err := f.Stat(ctx, p); err != nil {
		return nil, err
	}
	return []byte(f.name), nil
}
func (f oneFile) ReadFiles(ctx context.Context, paths []string, max int64) ([]shared.FileContent, error) {
	var out []shared.FileContent
	for _, p := range paths {
		data, err := f.ReadFile(ctx, p, max)
		out = append(out, shared.FileContent{Path: p, Data: data, Err: err})
	}
	return out, nil
}

// keeper hands out the filesystem of each Discover call, and ends the call
// when released.
type keeper struct {
	kept    chan shared.HostFS
	release chan struct{}
}

func (keeper) Describe(context.Context) (shared.ProviderInfo, error) {
	return shared.ProviderInfo{Name: "keeper"}, nil
}

func (k keeper) Discover(ctx context.Context, _ shared.DiscoverRequest, fsys shared.HostFS, sink shared.Sink) error {
	data, err := fsys.ReadFile(ctx, "/f", 100)
	if err != nil {
		return err
	}
	k.kept <- fsys
	select {
	case <-k.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return sink.Rule(shared.Rule{Name: string(data)})
}

type names []string

func (n *names) Rule(r shared.Rule) error     { *n = append(*n, r.Name); return nil }
func (n *names) Warning(shared.Warning) error { return nil }

// TestHostFSRefusesAnEndedCall checks that a filesystem a plugin kept past
// its Discover call reads nothing afterwards: neither between calls nor
// through the next call's filesystem, while that call's own reads work.
// It holds for discoveries on a Session as for Discover calls.
func TestHostFSRefusesAnEndedCall(t *testing.T) {
	for _, session := range []bool{false, true} {
		t.Run(fmt.Sprintf("session=%v", session), func(t *testing.T) { hostFSRefusesAnEndedCall(t, session) })
	}
}

func hostFSRefusesAnEndedCall(t *testing.T, session bool) {
	k := keeper{kept: make(chan shared.HostFS), release: make(chan struct{})}
	prov := dispense(t, k, session)
	ctx := context.Background()

	var got names
	done := make(chan error, 1)
	go func() { done <- prov.Discover(ctx, shared.DiscoverRequest{}, oneFile{"first"}, &got) }()
	first := <-k.kept
	if _, err := first.Stat(ctx, "/f"); err != nil {
		t.Fatalf("stat during the call: %v", err)
	}
	k.release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	refused := func(when string) {
		t.Helper()
		for name, call := range map[string]func() error{
			"stat":     func() error { _, err := first.Stat(ctx, "/f"); return err },
			"resolve":  func() error { _, err := first.Resolve(ctx, "/f"); return err },
			"readdir":  func() error { _, err := first.ReadDir(ctx, "/"); return err },
			"readfile": func() error { _, err := first.ReadFile(ctx, "/f", 100); return err },
			"readfiles": func() error {
				_, err := first.ReadFiles(ctx, []string{"/f"}, 100)
				return err
			},
		} {
			if err := call(); err == nil || !strings.Contains(err.Error(), "has ended") {
				t.Errorf("%s: %s through an ended call's filesystem: err = %v, want a refusal", when, name, err)
			}
		}
	}
	refused("between calls")

	// The second call: the plugin reads through both filesystems while it
	// runs; only its own answers.
	go func() { done <- prov.Discover(ctx, shared.DiscoverRequest{}, oneFile{"second"}, &got) }()
	now := <-k.kept
	old, during := first.ReadFile(ctx, "/f", 100)
	data, err := now.ReadFile(ctx, "/f", 100)
	k.release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if during == nil || !strings.Contains(during.Error(), "has ended") {
		t.Errorf("during the next call, the ended call's filesystem read %q, err = %v", old, during)
	}
	if string(data) != "second" || err != nil {
		t.Errorf("the call's own filesystem read %q, %v", data, err)
	}
	if !slices.Equal(got, names{"first", "second"}) {
		t.Errorf("rules = %v", got)
	}
	refused("after the second call")
	if n := prov.fsConns.Load(); n != 1 {
		t.Errorf("%d connections to the host's filesystem, want 1", n)
	}
}
