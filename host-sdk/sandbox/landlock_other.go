//go:build !linux

package sandbox

import (
	"errors"
	"runtime"
)

func restrict(Spec) error {
	return errors.New("Landlock exists on Linux only")
}

func execFD(int, []string, []string, int) error {
	return errors.New("the sandbox trampoline runs on Linux only")
}

// Probe says how providers will be confined: on this system, only by the
// reduced environment.
func Probe() (desc string, ok bool) {
	return "none: no Landlock on " + runtime.GOOS, false
}
