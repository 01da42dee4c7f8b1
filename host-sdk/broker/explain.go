package broker

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rulebroker/rulebroker/internal/wire"
)

// explain says in one line what a provider did when it failed to start or
// failed the call op ("describe", "discover"). The wire classifies the
// failure; this only words it, so nothing here reads gRPC's or go-plugin's
// text. The wording replaces the wire's message but not its kind: the
// result still matches wire.ErrTimeout, wire.ErrCrashed and the rest with
// errors.Is, which is how the live broker tells a crash from a refusal.
func explain(op string, err error, timeout time.Duration) error {
	var we *wire.Error
	if !errors.As(err, &we) {
		return fmt.Errorf("%s: %w", op, err)
	}
	return &explained{msg: word(op, we, timeout).Error(), kind: we}
}

// explained is a failure in the broker's words that keeps the wire's error.
type explained struct {
	msg  string
	kind *wire.Error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.kind }

func word(op string, we *wire.Error, timeout time.Duration) error {
	if we.Op == "start" {
		switch {
		case errors.Is(we, wire.ErrJunk):
			return fmt.Errorf("failed to start: it printed %q on stdout instead of a go-plugin handshake", clipLine(we.Detail))
		case errors.Is(we, wire.ErrTimeout):
			// go-plugin's start timeout or the caller's deadline, whichever
			// fired first: the same deadline either way.
			return fmt.Errorf("failed to start: timed out after %v", timeout)
		case errors.Is(we, wire.ErrNoService):
			return fmt.Errorf("no provider service: %s", we.Detail)
		case we.Detail == "":
			return errors.New("failed to start: it exited or closed stdout without a go-plugin handshake")
		default: // ErrStart, ErrProtocol, ErrTimeout, ErrCanceled: the detail says which
			return fmt.Errorf("failed to start: %s", we.Detail)
		}
	}
	switch {
	case errors.Is(we, wire.ErrTimeout):
		return fmt.Errorf("%s: timed out after %v", op, timeout)
	case errors.Is(we, wire.ErrCanceled):
		return fmt.Errorf("%s: cancelled by the host: %w", op, we.Err)
	case errors.Is(we, wire.ErrCrashed):
		return fmt.Errorf("%s: the connection was lost; the provider crashed or exited mid-call (%s)", op, we.Detail)
	case errors.Is(we, wire.ErrUnimplemented):
		return fmt.Errorf("%s: the provider does not implement it (%s)", op, we.Detail)
	default: // ErrFailed: the provider's own words
		return fmt.Errorf("%s: %s", op, we.Detail)
	}
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
