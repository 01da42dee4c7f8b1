// Command crash streams two rules and then dies mid-stream.
package main

import (
	"context"
	"os"

	"github.com/rulebroker/rulebroker/internal/wire"
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

func main() { wire.Serve(crash{}, nil) }
