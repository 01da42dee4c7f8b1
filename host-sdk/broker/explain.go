package broker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// startFailure rewrites go-plugin's start errors, which run to a dozen lines
// of generic advice, into one line that says what the provider did.
func startFailure(err error) error {
	msg := err.Error()
	const unrecognized = "Unrecognized remote plugin message: "
	if i := strings.Index(msg, unrecognized); i >= 0 {
		line, _, _ := strings.Cut(msg[i+len(unrecognized):], "\n")
		if strings.TrimSpace(line) == "" {
			return errors.New("failed to start: it exited or closed stdout without a go-plugin handshake")
		}
		return fmt.Errorf("failed to start: it printed %q on stdout instead of a go-plugin handshake", clipLine(line))
	}
	first, _, _ := strings.Cut(msg, "\n")
	return fmt.Errorf("failed to start: %s", first)
}

// callFailure explains a failed Describe or Discover call.
func callFailure(ctx context.Context, op string, err error, timeout fmt.Stringer) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: timed out after %v", op, timeout)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: cancelled by the host: %w", op, ctx.Err())
	}
	if st, ok := status.FromError(err); ok {
		switch st.Code() {
		case codes.Unavailable, codes.Canceled:
			return fmt.Errorf("%s: the connection was lost; the provider crashed or exited mid-call (%s)", op, st.Message())
		case codes.Unimplemented:
			return fmt.Errorf("%s: the provider does not implement it (%s)", op, st.Message())
		default:
			return fmt.Errorf("%s: %s", op, st.Message())
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

func clipLine(s string) string {
	if r := []rune(s); len(r) > 120 {
		return string(r[:119]) + "…"
	}
	return s
}

// stderrTail keeps the last lines a provider wrote to stderr, so a warning
// about a crash can quote the provider's own last words (a panic message,
// say).
type stderrTail struct {
	mu    sync.Mutex
	lines []string
	part  string
	panic string // the first "panic: …" or "fatal error: …" line
}

const tailLines = 5

// maxPart caps how much of an unfinished line is kept: enough for the
// clipped line a warning quotes, never the whole of an endless one.
const maxPart = 4096

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	text := t.part + string(p)
	parts := strings.Split(text, "\n")
	t.part = parts[len(parts)-1]
	if len(t.part) > maxPart {
		t.part = t.part[:maxPart]
	}
	for _, l := range parts[:len(parts)-1] {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, `{"@`) {
			continue // hclog JSON: go-plugin's and the provider's routine logs
		}
		t.lines = append(t.lines, clipLine(l))
		if t.panic == "" && (strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ")) {
			t.panic = clipLine(l)
		}
	}
	if len(t.lines) > tailLines {
		t.lines = t.lines[len(t.lines)-tailLines:]
	}
	return len(p), nil
}

// last returns the panic line if there was one, else the last non-empty
// line written, or "".
func (t *stderrTail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.panic != "" {
		return t.panic
	}
	if p := strings.TrimSpace(t.part); p != "" && !strings.HasPrefix(p, `{"@`) {
		return clipLine(p)
	}
	if len(t.lines) == 0 {
		return ""
	}
	return t.lines[len(t.lines)-1]
}
