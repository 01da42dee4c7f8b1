package plugin_test

import (
	"context"
	"fmt"
	"path"
	"testing/fstest"

	"github.com/rulebroker/rulebroker/plugin"
)

// team serves the markdown rules a team keeps in <workspace root>/.team/rules.
type team struct{}

func (team) Info() plugin.Info { return plugin.Info{Name: "team", Version: "1.0.0", Priority: 60} }

func (team) Discover(_ context.Context, req plugin.Request) (plugin.Result, error) {
	var res plugin.Result
	res.Rules, res.Warnings = plugin.LoadRules(req.FS, path.Join(req.WorkspaceRoot, ".team/rules"), plugin.LevelProject, ".md")
	return res, nil
}

// A provider is tested on an in-memory tree: the request's directories are
// names in its FS, and so are the paths of the rules and warnings it returns.
func Example() {
	fsys := fstest.MapFS{
		"home/u/proj/.team/rules/style.md":  {Data: []byte("---\ndescription: House style\n---\nUse tabs.\n")},
		"home/u/proj/.team/rules/review.md": {Data: []byte("---\nalwaysApply: true\n---\nTwo reviewers.\n")},
		"home/u/proj/.team/rules/empty.md":  {Data: []byte("")},
		"home/u/proj/.team/rules/notes.txt": {Data: []byte("not a rule")},
	}
	res, err := team{}.Discover(context.Background(), plugin.Request{
		Cwd: "home/u/proj", Home: "home/u", WorkspaceRoot: "home/u/proj", FS: fsys,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range res.Rules {
		fmt.Printf("%s %s always=%v %q\n", r.Name, r.Path, r.AlwaysApply, r.Description)
	}
	for _, w := range res.Warnings {
		fmt.Println("warning:", w)
	}
	// Output:
	// empty home/u/proj/.team/rules/empty.md always=false ""
	// review home/u/proj/.team/rules/review.md always=true ""
	// style home/u/proj/.team/rules/style.md always=false "House style"
	// warning: home/u/proj/.team/rules/empty.md: empty rule file
}
