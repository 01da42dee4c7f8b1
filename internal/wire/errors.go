package wire

import (
	"context"
	"errors"
	"io/fs"
	"os/exec"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The kinds of failure a provider connection can have. Every error Start and
// the Provider returned by a Client give back for a transport or remote
// failure is an *Error whose Kind is one of these, so a caller tells them
// apart with errors.Is and never has to read go-plugin's or gRPC's wording.
var (
	// ErrStart: the provider could not be started, or it exited before it
	// completed the handshake (not executable, missing, died at once).
	ErrStart = errors.New("provider failed to start")
	// ErrJunk: the provider printed something on stdout that is not a
	// handshake. Detail holds the first line it printed.
	ErrJunk = errors.New("provider printed something other than a handshake")
	// ErrProtocol: the provider speaks a protocol version, or a transport,
	// that this host does not.
	ErrProtocol = errors.New("provider speaks an incompatible protocol")
	// ErrNoService: the handshake worked but the provider service is missing.
	ErrNoService = errors.New("provider serves no provider service")
	// ErrCrashed: the connection was lost during a call: the provider
	// crashed or exited.
	ErrCrashed = errors.New("provider connection lost")
	// ErrTimeout: the caller's deadline passed, while starting or during a
	// call.
	ErrTimeout = errors.New("provider timed out")
	// ErrCanceled: the caller cancelled the call.
	ErrCanceled = errors.New("provider call cancelled")
	// ErrUnimplemented: the provider does not implement the call.
	ErrUnimplemented = errors.New("provider does not implement the call")
	// ErrTooLarge: the provider sent a message over the host's receive
	// limit (see MessageBytes); gRPC refused it without reading it.
	ErrTooLarge = errors.New("provider sent a message over the host's limit")
	// ErrFailed: the provider answered the call with an error of its own.
	// Detail is the provider's message.
	ErrFailed = errors.New("provider reported an error")
)

// Error is a classified failure of a provider connection.
type Error struct {
	// Kind is one of the Err* sentinels above.
	Kind error
	// Op is what was being done: "start", "describe" or "discover".
	Op string
	// Detail is one line in the words of whoever failed — the operating
	// system, go-plugin, gRPC or the provider — or "" when there are none
	// worth repeating (a provider that exited without a word, a timeout).
	Detail string
	// Err is the error as the transport returned it.
	Err error
}

func (e *Error) Error() string {
	s := e.Op + ": " + e.Kind.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Is reports whether target is e's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the transport's error.
func (e *Error) Unwrap() error { return e.Err }

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// startError classifies an error from starting a provider with go-plugin.
// go-plugin reports most of these only in its text, which runs to a dozen
// lines of generic advice; reading that text is this package's job so that
// nobody else has to.
func startError(ctx context.Context, err error) *Error {
	e := &Error{Kind: ErrStart, Op: "start", Detail: firstLine(err.Error()), Err: err}
	msg := err.Error()
	const unrecognized = "Unrecognized remote plugin message: "
	var pathErr *fs.PathError
	var execErr *exec.Error
	switch {
	case errors.As(err, &pathErr), errors.As(err, &execErr):
		// The operating system could not run the binary; Detail says why.
	case strings.Contains(msg, unrecognized):
		i := strings.Index(msg, unrecognized)
		line := firstLine(msg[i+len(unrecognized):])
		if strings.TrimSpace(line) == "" {
			e.Detail = "" // it exited, or closed stdout, without a word
		} else {
			e.Kind, e.Detail = ErrJunk, line
		}
	case strings.Contains(msg, "plugin exited before we could connect"):
	case strings.Contains(msg, "timeout while waiting for plugin to start"), ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		e.Kind = ErrTimeout
	case ctx.Err() != nil:
		e.Kind = ErrCanceled
	case strings.Contains(strings.ToLower(msg), "incompatible"),
		strings.Contains(msg, "unsupported plugin protocol"),
		strings.Contains(strings.ToLower(msg), "error parsing protocol version"),
		strings.Contains(msg, "error parsing core protocol version"),
		strings.Contains(msg, "unknown server protocol"):
		e.Kind = ErrProtocol
	}
	return e
}

// deadlinePassed reports whether ctx's deadline is behind us even if its
// timer has not fired yet. gRPC sends the deadline to the provider, whose
// copy can expire and cancel the stream a moment before the host's own
// timer runs; that call timed out, it did not crash.
func deadlinePassed(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// callError classifies the failure of a Describe or Discover call. The
// caller's context decides first: a call cut short by its deadline or its
// cancellation fails with a transport error that would otherwise read like a
// crash.
func callError(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded), deadlinePassed(ctx):
		return &Error{Kind: ErrTimeout, Op: op, Err: err}
	case ctx.Err() != nil:
		return &Error{Kind: ErrCanceled, Op: op, Detail: ctx.Err().Error(), Err: ctx.Err()}
	}
	st, ok := status.FromError(err)
	if !ok {
		return err // not the transport's: a sink's own error, say
	}
	e := &Error{Kind: ErrFailed, Op: op, Detail: st.Message(), Err: err}
	switch st.Code() {
	case codes.DeadlineExceeded:
		e.Kind = ErrTimeout
	case codes.Unavailable, codes.Canceled:
		e.Kind = ErrCrashed
	case codes.Unimplemented:
		e.Kind = ErrUnimplemented
	case codes.ResourceExhausted:
		e.Kind = ErrTooLarge
	}
	return e
}
