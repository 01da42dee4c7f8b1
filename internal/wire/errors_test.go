package wire

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestStartErrorKinds(t *testing.T) {
	_, execErr := exec.Command("/nonexistent/rulebroker-provider-x").Output()
	tests := []struct {
		err    error
		kind   error
		detail string
	}{
		{errors.New("Unrecognized remote plugin message: junk\nThis usually means\n  the plugin was not compiled..."), ErrJunk, "junk"},
		{errors.New("Unrecognized remote plugin message: \nFailed to read any lines"), ErrStart, ""},
		{errors.New("plugin exited before we could connect"), ErrStart, "plugin exited before we could connect"},
		{execErr, ErrStart, execErr.Error()},
		{fmt.Errorf("Incompatible API version with plugin. Plugin version: 99, Client versions: [1]"), ErrProtocol,
			"Incompatible API version with plugin. Plugin version: 99, Client versions: [1]"},
		{errors.New(`unsupported plugin protocol "netrpc". Supported: [grpc]`), ErrProtocol, `unsupported plugin protocol "netrpc". Supported: [grpc]`},
		{errors.New("timeout while waiting for plugin to start"), ErrTimeout, "timeout while waiting for plugin to start"},
	}
	for _, tt := range tests {
		e := startError(context.Background(), tt.err)
		if !errors.Is(e, tt.kind) || e.Detail != tt.detail || e.Op != "start" {
			t.Errorf("%q → kind %v, detail %q; want %v, %q", tt.err, e.Kind, e.Detail, tt.kind, tt.detail)
		}
		if !errors.Is(e, tt.err) {
			t.Errorf("%q: the transport's error must stay reachable", tt.err)
		}
	}
}

func TestCallErrorKinds(t *testing.T) {
	live := context.Background()
	for code, kind := range map[codes.Code]error{
		codes.Unavailable:   ErrCrashed,
		codes.Canceled:      ErrCrashed,
		codes.Unimplemented: ErrUnimplemented,
		codes.Unknown:       ErrFailed,
	} {
		err := callError(live, "discover", status.Error(code, "words"))
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, kind) || e.Detail != "words" || e.Op != "discover" {
			t.Errorf("%v → %#v, want kind %v with the status message", code, err, kind)
		}
	}
	if err := callError(live, "discover", errors.New("sink full")); err.Error() != "sink full" {
		t.Errorf("an error that is not the transport's passes as is, got %v", err)
	}
}

// When the caller cancels or its deadline passes, a failed call is the
// caller's doing, not a crash, whatever the transport says.
func TestCallErrorBlamesTheCallersContext(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	err := callError(cancelled, "discover", status.Error(codes.Canceled, "context canceled"))
	if !errors.Is(err, ErrCanceled) || errors.Is(err, ErrCrashed) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call → %v", err)
	}
	expired, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-expired.Done()
	if err := callError(expired, "describe", status.Error(codes.Unavailable, "EOF")); !errors.Is(err, ErrTimeout) {
		t.Errorf("expired call → %v", err)
	}
}

// A stream the provider's copy of the deadline cut short, reported before
// the host's own timer fired, is a timeout, not a crash.
func TestCallErrorDeadlinePassedBeforeTimer(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
	defer cancel()
	// A context whose deadline passed reports DeadlineExceeded at once in Go;
	// strip that to model the window before the timer runs.
	early := deadlineOnly{ctx}
	err := callError(early, "discover", status.Error(codes.Canceled, "stream terminated by RST_STREAM with error code: CANCEL"))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want a timeout", err)
	}
	err = callError(context.Background(), "discover", status.Error(codes.DeadlineExceeded, "context deadline exceeded"))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want a timeout", err)
	}
}

// deadlineOnly has a deadline but never reports an error, like a context
// whose timer has not fired yet.
type deadlineOnly struct{ context.Context }

func (deadlineOnly) Err() error { return nil }
