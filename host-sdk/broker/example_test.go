package broker

import (
	"context"
	"fmt"

	"github.com/rulebroker/rulebroker/host-sdk/workfs/workfstest"
	"github.com/rulebroker/rulebroker/shared"
)

// Two providers, each its own process (here the test binary re-executed),
// both send a rule named "shared-name": the one with the higher priority
// wins it, and the other's copy stays in the list, marked shadowed.
func ExampleLoad() {
	fsys := workfstest.NewMem()
	fsys.WriteFile("/work/rule.md", []byte("Prefer small functions."))

	res, err := Load(context.Background(), Options{
		Builtins: []Builtin{testBuiltin("alpha", 10, ""), testBuiltin("beta", 20, "")},
		FS:       fsys,
	}, shared.DiscoverRequest{Cwd: "/work", WorkspaceRoot: "/work"})
	if err != nil {
		panic(err)
	}
	for _, r := range res.Rules {
		fmt.Printf("%-12s from %-5s shadowed=%v\n", r.Name, r.Provider, r.Shadowed)
	}
	// Output:
	// shared-name  from beta  shadowed=false
	// beta-only    from beta  shadowed=false
	// shared-name  from alpha shadowed=true
	// alpha-only   from alpha shadowed=false
}
