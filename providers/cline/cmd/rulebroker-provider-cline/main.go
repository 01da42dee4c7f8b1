// Command rulebroker-provider-cline serves the cline rule provider as a rulebroker
// plugin. A host starts it; run by hand, it explains that and exits.
package main

import (
	"github.com/rulebroker/rulebroker/plugin"
	"github.com/rulebroker/rulebroker/providers/cline"
)

func main() { plugin.Serve(cline.New()) }
