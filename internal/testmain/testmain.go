// Package testmain ends a test binary without the race detector's exit
// sleep. Each package's TestMain calls Main (or Exit, when its binary is
// also re-executed as a provider or a host).
//
// A binary built with -race that exits with status 0 while goroutines
// remain sleeps for GORACE's atexit_sleep_ms (a second by default) so that
// those goroutines can still report a race. Almost every test binary has
// such goroutines (gRPC's, go-plugin's, the testing package's own), so the
// sleep was a second of every package's run under `go test -race ./...`,
// about the whole run of most of them. The environment variable cannot be set
// from inside the binary (the race runtime reads it at start), and the
// README's test command is plain `go test -race ./...`, so the binary skips
// the sleep itself.
//
// What is given up: the race runtime's last report of a race found in a
// goroutine still running after the tests ended, and the exit status 66
// that would come with it. A race found while a test runs still fails that
// test (the testing package checks the race count around each test), and
// one found between the tests and the end of m.Run still fails the binary
// ("race detected outside of test execution"); only the status of a run
// that already failed, or one under -cover (whose profile is written by
// the exit path being skipped), goes the ordinary way.
package testmain

import (
	"os"
	"syscall"
	"testing"
)

// Main runs m's tests and exits with their status (see Exit).
func Main(m *testing.M) {
	Exit(m.Run())
}

// Exit ends the process with code, as os.Exit does, except that a race
// build exiting with 0 skips the race runtime's end-of-process sleep and
// report. Output already written is not lost: os.Stdout and os.Stderr are
// unbuffered.
func Exit(code int) {
	if code != 0 || !Race || testing.CoverMode() != "" {
		os.Exit(code)
	}
	syscall.Exit(0)
}
