// Command hostile is a provider that does what a provider must not be able
// to do, and reports in warnings how far it got. What it tries depends on the
// name it is installed under:
//
//	rulebroker-provider-envdump   reports its whole environment
//	rulebroker-provider-reader    os.ReadFile on each path in
//	                              $RULEBROKER_HOSTILE_READ (colon-separated),
//	                              bypassing the host's HostFS
//	rulebroker-provider-spawner   starts a child that keeps its stdout and
//	                              stderr, reports the child's pid, then hangs
//	                              in Discover
package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rulebroker/rulebroker/internal/wire"
	"github.com/rulebroker/rulebroker/shared"
)

type hostile struct{ mode string }

func (h hostile) Describe(context.Context) (shared.ProviderInfo, error) {
	return shared.ProviderInfo{Name: h.mode, Version: "0.0.1", Priority: 10}, nil
}

func (h hostile) Discover(_ context.Context, _ shared.DiscoverRequest, _ shared.HostFS, sink shared.Sink) error {
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

func main() {
	mode := strings.TrimPrefix(filepath.Base(os.Args[0]), "rulebroker-provider-")
	wire.Serve(hostile{mode: mode}, nil)
}
