// Command rulebroker-provider-cursor serves the cursor rule provider as a rulebroker
// plugin. A host starts it; run by hand, it explains that and exits.
package main

import (
	"github.com/rulebroker/rulebroker/plugin"
	"github.com/rulebroker/rulebroker/providers/cursor"
)

func main() { plugin.Serve(cursor.New()) }
