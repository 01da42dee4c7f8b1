// Command rulebroker-provider-native serves the native rule provider as a rulebroker
// plugin. A host starts it; run by hand, it explains that and exits.
package main

import (
	"github.com/rulebroker/rulebroker/plugin"
	"github.com/rulebroker/rulebroker/providers/native"
)

func main() { plugin.Serve(native.New()) }
