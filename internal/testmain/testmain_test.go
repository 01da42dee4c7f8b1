package testmain

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// childEnv makes the re-executed test binary run one of the child tests
// below, which otherwise skip.
const childEnv = "TESTMAIN_CHILD"

func TestMain(m *testing.M) { Main(m) }

// runChild runs this test binary again on the one child test named, with
// extra environment, and returns its combined output and error. The wait is
// bounded far beyond the child's work (milliseconds) but well inside the
// minute of exit sleep TestPassingRaceBuildSkipsTheExitSleep asks for.
func runChild(t *testing.T, test string, env ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), append(env, childEnv+"="+test)...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s did not exit within 30s (killed): %s", test, out)
	}
	return string(out), err
}

// TestRaceStillFailsTheBinary: skipping the exit sleep must not hide a race
// found while a test runs.
func TestRaceStillFailsTheBinary(t *testing.T) {
	if !Race {
		t.Skip("the race detector is off: nothing to check")
	}
	out, err := runChild(t, "TestChildRacy")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("a racy test passed the binary: err %v\n%s", err, out)
	}
	if !strings.Contains(out, "WARNING: DATA RACE") || !strings.Contains(out, "race detected during execution of test") {
		t.Fatalf("no race report in the output:\n%s", out)
	}
}

// TestPassingRaceBuildSkipsTheExitSleep: a passing race build with a
// goroutine left over exits at once, though GORACE asks it to sleep a minute.
func TestPassingRaceBuildSkipsTheExitSleep(t *testing.T) {
	if !Race {
		t.Skip("the race detector is off: no exit sleep to skip")
	}
	if out, err := runChild(t, "TestChildLeavesAGoroutine", "GORACE=atexit_sleep_ms=60000"); err != nil {
		t.Fatalf("passing child: %v\n%s", err, out)
	}
}

func TestChildRacy(t *testing.T) {
	if os.Getenv(childEnv) != t.Name() {
		t.Skip("run by TestRaceStillFailsTheBinary")
	}
	// Two unordered writes: the detector reports them every time.
	var x int
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { x = i })
	}
	wg.Wait()
	_ = x
}

func TestChildLeavesAGoroutine(t *testing.T) {
	if os.Getenv(childEnv) != t.Name() {
		t.Skip("run by TestPassingRaceBuildSkipsTheExitSleep")
	}
	go func() { select {} }()
}
