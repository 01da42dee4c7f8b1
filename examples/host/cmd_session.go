package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/rulebroker/rulebroker/host-sdk/attach"
	"github.com/rulebroker/rulebroker/host-sdk/instructions"
	"github.com/rulebroker/rulebroker/host-sdk/lifecycle"
	"github.com/rulebroker/rulebroker/host-sdk/ttsr"
	"github.com/rulebroker/rulebroker/shared"
)

// sessionEvent is one line of input.
type sessionEvent struct {
	Event  string   `json:"event"`
	Tool   string   `json:"tool"`
	Paths  []string `json:"paths"`
	Source string   `json:"source"`
	Delta  string   `json:"delta"`
}

// sessionOut is one line of output: the event and what it caused.
type sessionOut struct {
	Event   string                 `json:"event"`
	Tool    string                 `json:"tool,omitempty"`
	Source  string                 `json:"source,omitempty"`
	Turn    *int                   `json:"turn,omitempty"`
	Scopes  []instructions.Scope   `json:"scopes,omitempty"`
	Changes *[]instructions.Change `json:"changes,omitempty"` // present, maybe empty, when instructions could change
	Message *instructions.Message  `json:"message,omitempty"`
	// Attached (native mode, tools/post-execute): the rules the touched
	// paths attached, maybe none, and the one message that injects them.
	Attached        *[]attach.Attached `json:"attached,omitempty"`
	AttachedMessage *lifecycle.Message `json:"attachedMessage,omitempty"`
	Fired           *[]firedJSON       `json:"fired,omitempty"` // present, maybe empty, for a stream event
	Warnings        []string           `json:"warnings,omitempty"`
	Error           string             `json:"error,omitempty"`
}

type firedJSON struct {
	Rule    string `json:"rule"`
	Path    string `json:"path"`
	Stream  string `json:"stream"`
	Match   string `json:"match"`
	Pattern string `json:"pattern"`
	Inject  string `json:"inject"`
}

// cmdSession replays agent events from stdin. It loads the rules once (the
// providers run, answer and exit), announces the instructions baseline, and
// then answers every event with one JSON line. A malformed line gets an error
// line and the session goes on.
func cmdSession(ctx context.Context, cfg *config, args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) != 0 {
		return &exitError{code: 2, msg: "session takes no arguments"}
	}
	res, err := loadRules(ctx, cfg)
	if err != nil {
		return err
	}
	book := newBook(cfg, res)
	triggers := book.NewTTSR()

	rec, err := newReconciler(ctx, cfg)
	if err != nil {
		return err
	}
	var bus lifecycle.Bus
	// Instructions first, then the rules the same tool call attached: the
	// order the model reads them in.
	instr := rec.Attach(&bus)

	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)

	baseline, err := rec.Baseline(ctx)
	if err != nil {
		return err
	}
	warnings := instructionWarnings(baseline.Warnings)
	for _, w := range book.warnings {
		warnings = append(warnings, w.String())
	}
	var attached *lifecycle.Subscription[attach.Round]
	if cfg.activation == shared.ModeNative {
		// The workspace root is known once the baseline ran. The attacher's
		// glob warnings come with the first tool call it answers.
		attacher, _ := attach.New(book.Attached(), attach.Config{WorkspaceRoot: rec.Root(), Cwd: cfg.cwd})
		attached = attacher.Attach(&bus)
	}
	if err := enc.Encode(sessionOut{Event: "baseline", Scopes: rec.Loaded(), Changes: nonNilChanges(baseline.Changes),
		Message: baseline.Message, Warnings: warnings}); err != nil {
		return err
	}

	lines, readErr := readLines(stdin)
	for {
		select {
		case <-ctx.Done():
			// A read from stdin cannot be cancelled; stop waiting for it.
			return errInterrupted
		case line, ok := <-lines:
			if !ok {
				if err := <-readErr; err != nil {
					return fmt.Errorf("reading events: %w", err)
				}
				return nil
			}
			if len(line) == 0 {
				continue
			}
			if err := enc.Encode(handleEvent(ctx, line, &bus, instr, attached, triggers, cfg.cwd)); err != nil {
				return err
			}
		}
	}
}

// readLines delivers r's lines (up to 16 MiB each) on a channel, so the
// session can also watch for an interrupt; the error channel carries the
// reader's final error once lines is closed.
func readLines(r io.Reader) (<-chan []byte, <-chan error) {
	lines := make(chan []byte)
	errc := make(chan error, 1)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		errc <- sc.Err()
	}()
	return lines, errc
}

func handleEvent(ctx context.Context, line []byte, bus *lifecycle.Bus, instr *lifecycle.Subscription[instructions.Round],
	attached *lifecycle.Subscription[attach.Round], triggers *ttsr.Manager, cwd string) sessionOut {
	var ev sessionEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return sessionOut{Event: "invalid", Error: "not a JSON event: " + err.Error()}
	}
	out := sessionOut{Event: ev.Event}
	switch ev.Event {
	case lifecycle.EventToolsPostExecute:
		out.Tool = ev.Tool
		out.Changes = nonNilChanges(nil)
		results := bus.PostExecute(ctx, lifecycle.PostExecute{Tool: ev.Tool, Paths: ev.Paths})
		for _, r := range results {
			if r.Err != nil {
				out.Error = r.Err.Error()
			}
		}
		if round, err := instr.From(results); err == nil {
			out.Changes, out.Message = nonNilChanges(round.Changes), round.Message
			out.Warnings = append(out.Warnings, instructionWarnings(round.Warnings)...)
		}
		if attached != nil {
			list := []attach.Attached{}
			if round, err := attached.From(results); err == nil {
				list = append(list, round.Attached...)
				out.AttachedMessage = round.Message
				for _, w := range round.Warnings {
					out.Warnings = append(out.Warnings, w.String())
				}
			}
			out.Attached = &list
		}
	case "stream":
		out.Source = ev.Source
		if ev.Source == "" {
			out.Error = `a stream event needs a "source" (text, thinking, or a tool call id)`
			break
		}
		fired := []firedJSON{}
		for _, m := range triggers.Feed(ev.Source, ev.Delta) {
			fired = append(fired, firedJSON{Rule: m.Rule, Path: m.Path, Stream: m.Stream,
				Match: m.Text, Pattern: m.Pattern, Inject: ttsr.InjectionMessage(m, cwd)})
		}
		out.Fired = &fired
	case "turn_start":
		triggers.TurnStart()
		turn := triggers.Turn()
		out.Turn = &turn
	default:
		out.Error = fmt.Sprintf("unknown event %q (want tools/post-execute, stream or turn_start)", ev.Event)
	}
	return out
}

func nonNilChanges(c []instructions.Change) *[]instructions.Change {
	if c == nil {
		c = []instructions.Change{}
	}
	return &c
}
