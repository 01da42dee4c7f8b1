// Command rulebroker-provider-windsurf serves the windsurf rule provider as a rulebroker
// plugin. A host starts it; run by hand, it explains that and exits.
package main

import (
	"github.com/rulebroker/rulebroker/plugin"
	"github.com/rulebroker/rulebroker/providers/windsurf"
)

func main() { plugin.Serve(windsurf.New()) }
