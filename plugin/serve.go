package plugin

import (
	"context"
	"fmt"
	"os"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/rulebroker/rulebroker/shared"
)

// Serve runs p as a provider plugin process and returns when the host is done
// with it. It logs as hclog JSON on stderr; stdout carries the go-plugin
// handshake and nothing else.
func Serve(p Provider) {
	info := p.Info()
	logger := hclog.New(&hclog.LoggerOptions{
		Name:       "rulebroker-provider-" + info.Name,
		Output:     os.Stderr,
		JSONFormat: true,
		Level:      hclog.Info,
	})
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig:  shared.Handshake(),
		VersionedPlugins: shared.VersionedPlugins(Adapt(p)),
		GRPCServer:       goplugin.DefaultGRPCServer,
		Logger:           logger,
	})
}

// Adapt turns an SDK provider into the wire contract's shared.Provider. Serve
// uses it; tests use it to put a provider behind a real gRPC connection.
func Adapt(p Provider) shared.Provider { return adapter{p} }

type adapter struct{ p Provider }

func (a adapter) Describe(context.Context) (shared.ProviderInfo, error) {
	return a.p.Info(), nil
}

func (a adapter) Discover(ctx context.Context, req shared.DiscoverRequest, fsys shared.HostFS, sink shared.Sink) (err error) {
	// A provider bug must cost this call, not the process: the host reports
	// the error as a warning and keeps every other provider's rules.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("provider panicked: %v", r)
		}
	}()
	res, err := a.p.Discover(ctx, Request{
		Cwd:           req.Cwd,
		Home:          req.Home,
		WorkspaceRoot: req.WorkspaceRoot,
		FS:            newHostFS(ctx, fsys),
	})
	for _, w := range res.Warnings {
		if serr := sink.Warning(w); serr != nil {
			return serr
		}
	}
	if err != nil {
		// The host drops a failed provider's rules; its warnings still help.
		return err
	}
	for _, r := range res.Rules {
		if serr := sink.Rule(r); serr != nil {
			return serr
		}
	}
	return nil
}
