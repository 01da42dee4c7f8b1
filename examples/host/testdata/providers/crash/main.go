// Command crash streams two rules and then dies mid-stream.
package main

import (
	"context"
	"os"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/rulebroker/rulebroker/shared"
)

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

func main() {
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig:  shared.Handshake(),
		VersionedPlugins: shared.VersionedPlugins(crash{}),
		GRPCServer:       goplugin.DefaultGRPCServer,
	})
}
