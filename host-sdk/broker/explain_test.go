package broker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestStartFailureIsOneClearLine(t *testing.T) {
	long := errors.New("Unrecognized remote plugin message: junk\nThis usually means\n  the plugin was not compiled...")
	got := startFailure(long).Error()
	if got != `failed to start: it printed "junk" on stdout instead of a go-plugin handshake` {
		t.Errorf("got %q", got)
	}
	got = startFailure(errors.New("Unrecognized remote plugin message: \nFailed to read any lines")).Error()
	if !strings.Contains(got, "without a go-plugin handshake") || strings.Contains(got, "\n") {
		t.Errorf("got %q", got)
	}
}

func TestStderrTailQuotesThePanicNotTheLogs(t *testing.T) {
	var tail stderrTail
	tail.Write([]byte(`{"@level":"debug","@message":"plugin address"}` + "\n"))
	if tail.last() != "" {
		t.Fatalf("hclog JSON lines are routine, got %q", tail.last())
	}
	tail.Write([]byte("panic: assignment to entry in nil ma"))
	tail.Write([]byte("p\n\ngoroutine 1 [running]:\nmain.main()\n"))
	if got := tail.last(); got != "panic: assignment to entry in nil map" {
		t.Fatalf("last = %q", got)
	}
}

// A provider that floods stderr without a newline must not make the host
// hold (and re-copy on every write) the whole flood: go-plugin hands it over
// in 64 KiB pieces, and Kill waits until all of it has been written here.
func TestStderrTailBoundsAnEndlessLine(t *testing.T) {
	var tail stderrTail
	chunk := []byte(strings.Repeat("x", 64<<10))
	tail.Write([]byte("panic-free start "))
	for range 64 {
		tail.Write(chunk)
	}
	if n := len(tail.part); n > maxPart {
		t.Fatalf("kept %d bytes of an unfinished line, want at most %d", n, maxPart)
	}
	if got := tail.last(); !strings.HasPrefix(got, "panic-free start xxx") || !strings.HasSuffix(got, "…") {
		t.Fatalf("last = %q", got)
	}
	tail.Write([]byte("\nfatal error: out of memory\n"))
	if got := tail.last(); got != "fatal error: out of memory" {
		t.Fatalf("last = %q", got)
	}
}

// When the host cancels the load, a provider's failed call is the host's
// doing, not a crash.
func TestCallFailureOnHostCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got := callFailure(ctx, "discover", status.Error(codes.Canceled, "context canceled"), time.Second).Error()
	if strings.Contains(got, "crashed") || !strings.Contains(got, "cancelled by the host") {
		t.Fatalf("got %q", got)
	}
	live := context.Background()
	got = callFailure(live, "discover", status.Error(codes.Unavailable, "EOF"), time.Second).Error()
	if !strings.Contains(got, "crashed or exited mid-call") {
		t.Fatalf("got %q", got)
	}
}
