package instructions_test

import (
	"context"
	"fmt"
	"time"

	"github.com/rulebroker/rulebroker/host-sdk/instructions"
	"github.com/rulebroker/rulebroker/host-sdk/workfs/workfstest"
)

// A session's instructions: the baseline announces every file that applies,
// and a round after a tool call announces only what changed.
func Example() {
	ctx := context.Background()
	fsys := workfstest.NewMem()
	fsys.WriteFile("/repo/.git/HEAD", []byte("ref: refs/heads/main\n"))
	fsys.WriteFile("/repo/AGENTS.md", []byte("Run the tests before every commit.\n"))
	fsys.WriteFile("/repo/api/AGENTS.md", []byte("Handlers return typed errors.\n"))

	rec, err := instructions.New(instructions.Config{
		FS:  fsys,
		Cwd: "/repo",
		// A clock well past the files' times, so their versions are trusted.
		Now: func() time.Time { return time.Now().Add(time.Hour) },
	})
	if err != nil {
		panic(err)
	}
	baseline, _ := rec.Baseline(ctx)
	for _, c := range baseline.Changes {
		fmt.Printf("baseline: %s %q\n", c.Action, c.Key) // the key is directory NUL candidate
	}

	// The agent edits a file under api/: that directory's AGENTS.md now
	// applies too, and only it is announced.
	round, _ := rec.PostExecute(ctx, "write", []string{"/repo/api/handler.go"})
	for _, c := range round.Changes {
		fmt.Println("after write:", c.Action, c.Path)
	}
	// Output:
	// baseline: set ".\x00AGENTS.md"
	// after write: set /repo/api/AGENTS.md
}
