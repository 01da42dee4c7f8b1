package bench

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/rulebroker/rulebroker/internal/testmain"
)

// rusageEnv makes the test binary a small wrapper that runs its arguments
// and prints the child's peak RSS in KiB on its last stderr line.
//
// The wrapper exists because Linux's ru_maxrss of a child starts from the
// high-water mark of the process that forked it: measured straight from
// this test process, which holds the generated trees and the host's output,
// every child would seem at least as large as the benchmark itself.
const rusageEnv = "RULEBROKER_BENCH_RUSAGE"

func TestMain(m *testing.M) {
	if os.Getenv(rusageEnv) == "1" {
		os.Exit(wrap(os.Args[1:]))
	}
	testmain.Exit(m.Run())
}

func wrap(args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = os.Environ()
	err := cmd.Run()
	code := 0
	if err != nil {
		code = 1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && cmd.ProcessState != nil {
		fmt.Fprintf(os.Stderr, "\nmaxrss-kib %d\n", ru.Maxrss)
	}
	return code
}
