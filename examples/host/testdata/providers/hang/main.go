// Command hang answers Describe and then never finishes Discover, ignoring
// cancellation, like a provider stuck in a system call.
package main

import (
	"context"

	"github.com/rulebroker/rulebroker/plugin"
)

type hang struct{}

func (hang) Info() plugin.Info { return plugin.Info{Name: "hang", Version: "0.0.1", Priority: 10} }

func (hang) Discover(context.Context, plugin.Request) (plugin.Result, error) {
	select {}
}

func main() { plugin.Serve(hang{}) }
