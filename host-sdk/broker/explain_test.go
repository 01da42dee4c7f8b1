package broker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rulebroker/rulebroker/internal/wire"
)

// Each kind of failure the wire reports reads as one line saying what the
// provider did. These are the texts hosts and their users see.
func TestExplainWordsEachKind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		op   string
		err  error
		want string
	}{
		{"start", &wire.Error{Kind: wire.ErrJunk, Op: "start", Detail: "junk"},
			`failed to start: it printed "junk" on stdout instead of a go-plugin handshake`},
		{"start", &wire.Error{Kind: wire.ErrStart, Op: "start"},
			"failed to start: it exited or closed stdout without a go-plugin handshake"},
		{"start", &wire.Error{Kind: wire.ErrStart, Op: "start", Detail: "fork/exec /p: permission denied"},
			"failed to start: fork/exec /p: permission denied"},
		{"start", &wire.Error{Kind: wire.ErrProtocol, Op: "start", Detail: "incompatible API version with plugin. Plugin version: 99, Client versions: [1]"},
			"failed to start: incompatible API version with plugin. Plugin version: 99, Client versions: [1]"},
		{"start", &wire.Error{Kind: wire.ErrNoService, Op: "start", Detail: "unknown plugin type"},
			"no provider service: unknown plugin type"},
		{"discover", &wire.Error{Kind: wire.ErrTimeout, Op: "discover"},
			"discover: timed out after 1s"},
		{"discover", &wire.Error{Kind: wire.ErrCanceled, Op: "discover", Err: context.Canceled},
			"discover: cancelled by the host: context canceled"},
		{"discover", &wire.Error{Kind: wire.ErrCrashed, Op: "discover", Detail: "error reading from server: EOF"},
			"discover: the connection was lost; the provider crashed or exited mid-call (error reading from server: EOF)"},
		{"describe", &wire.Error{Kind: wire.ErrUnimplemented, Op: "describe", Detail: "method Describe not implemented"},
			"describe: the provider does not implement it (method Describe not implemented)"},
		{"discover", &wire.Error{Kind: wire.ErrFailed, Op: "discover", Detail: "boom"},
			"discover: boom"},
		{"discover", errors.New("sink full"), "discover: sink full"},
	}
	for _, tt := range tests {
		got := explain(tt.op, tt.err, time.Second)
		if got.Error() != tt.want {
			t.Errorf("explain(%v)\n got %q\nwant %q", tt.err, got, tt.want)
		}
		// The wording keeps the wire's kind: the live broker decides on it.
		var we *wire.Error
		if errors.As(tt.err, &we) && !errors.Is(got, we.Kind) {
			t.Errorf("explain(%v) lost its kind %v", tt.err, we.Kind)
		}
	}
	long := &wire.Error{Kind: wire.ErrJunk, Op: "start", Detail: strings.Repeat("x", 500)}
	if got := explain("start", long, time.Second).Error(); len(got) > 300 {
		t.Errorf("a long junk line is clipped, got %d bytes", len(got))
	}
}

func TestStderrTailQuotesThePanicNotTheLogs(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
