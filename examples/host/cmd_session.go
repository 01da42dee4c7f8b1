package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/rulebroker/rulebroker/host-sdk/attach"
	"github.com/rulebroker/rulebroker/host-sdk/broker"
	"github.com/rulebroker/rulebroker/host-sdk/instructions"
	"github.com/rulebroker/rulebroker/host-sdk/lifecycle"
	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
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
	Fired   *[]firedJSON           `json:"fired,omitempty"` // present, maybe empty, for a stream event
	// Attached (native mode, tools/post-execute): the rules the touched
	// paths attached, maybe none, and the one message that injects them.
	Attached        *[]attach.Attached `json:"attached,omitempty"`
	AttachedMessage *lifecycle.Message `json:"attachedMessage,omitempty"`
	// Rules is how the rules changed after a tool call; Providers the
	// provider processes (at the baseline and on a "providers" event).
	Rules     *ruleChangesJSON      `json:"rules,omitempty"`
	Providers []sessionProviderJSON `json:"providers,omitempty"`
	Warnings  []string              `json:"warnings,omitempty"`
	Error     string                `json:"error,omitempty"`
}

type firedJSON struct {
	Rule    string `json:"rule"`
	Path    string `json:"path"`
	Stream  string `json:"stream"`
	Match   string `json:"match"`
	Pattern string `json:"pattern"`
	Inject  string `json:"inject"`
}

// ruleChangesJSON is what a tool call changed in the rules: the rule lists (each
// present, maybe empty), the providers that ran again, and the one message
// for the model.
type ruleChangesJSON struct {
	Added      []ruleRef `json:"added"`
	Removed    []ruleRef `json:"removed"`
	Changed    []ruleRef `json:"changed"`
	Shadowed   []ruleRef `json:"shadowed"`
	Unshadowed []ruleRef `json:"unshadowed"`
	Discovered []string  `json:"discovered"`
	Restarted  []string  `json:"restarted"`
	Message    string    `json:"message,omitempty"`
}

type ruleRef struct {
	Name       string `json:"name"`
	Provider   string `json:"provider"`
	Path       string `json:"path"`
	ShadowedBy string `json:"shadowedBy,omitempty"`
}

type sessionProviderJSON struct {
	Name     string `json:"name"`
	PID      int    `json:"pid"`
	Crashes  int    `json:"crashes"`
	Degraded bool   `json:"degraded"`
	Rules    int    `json:"rules"`
	Partial  string `json:"partial,omitempty"` // the cap it reached, or a failed read
}

func refs(rules []ruleset.Rule) []ruleRef {
	out := []ruleRef{}
	for _, r := range rules {
		out = append(out, ruleRef{Name: r.Name, Provider: r.Provider, Path: r.Path, ShadowedBy: r.ShadowedBy})
	}
	return out
}

func providersJSON(res broker.Result) []sessionProviderJSON {
	var out []sessionProviderJSON
	for _, p := range res.Providers {
		out = append(out, sessionProviderJSON{Name: p.Name, PID: p.PID, Crashes: p.Crashes, Degraded: p.Degraded, Rules: p.Rules, Partial: p.Partial})
	}
	return out
}

func rulesOut(ch broker.Change) *ruleChangesJSON {
	return &ruleChangesJSON{
		Added: refs(ch.Rules.Added), Removed: refs(ch.Rules.Removed), Changed: refs(ch.Rules.Changed),
		Shadowed: refs(ch.Rules.Shadowed), Unshadowed: refs(ch.Rules.Unshadowed),
		Discovered: append([]string{}, ch.Discovered...), Restarted: append([]string{}, ch.Restarted...),
		Message: ch.Message,
	}
}

// cmdSession replays agent events from stdin. Its providers stay up for the
// whole session (a live broker): it announces the instructions baseline, then
// answers every event with one JSON line; after a tool call the instructions
// are reconciled first and then the rules are re-checked, each change
// announced once. A malformed line gets an error line and the session goes
// on.
func cmdSession(ctx context.Context, cfg *config, args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) != 0 {
		return &exitError{code: 2, msg: "session takes no arguments"}
	}
	live, req, rootWarnings, err := startLive(ctx, cfg)
	if err != nil {
		return err
	}
	defer live.Close()
	res := live.Result()
	res.Warnings = append(res.Warnings, rootWarnings...)
	book := newBook(cfg, res)

	rec, err := newReconciler(ctx, cfg)
	if err != nil {
		return err
	}
	var bus lifecycle.Bus
	instr := rec.Attach(&bus)
	// Then the rules the same tool call attached (native mode only: the
	// reference pipeline enforces no globs), then rule changes, last.
	var attacher *attach.Attacher
	var attached *lifecycle.Subscription[attach.Round]
	if cfg.activation == shared.ModeNative {
		// The attacher's glob warnings come with the first tool call it
		// answers.
		attacher, _ = attach.New(live.Book().Attached(), attach.Config{WorkspaceRoot: req.WorkspaceRoot, Cwd: cfg.cwd})
		attached = attacher.Attach(&bus)
	}
	rules := live.Attach(&bus)

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
	if err := enc.Encode(sessionOut{Event: "baseline", Scopes: rec.Loaded(), Changes: nonNilChanges(baseline.Changes),
		Message: baseline.Message, Warnings: warnings, Providers: providersJSON(res)}); err != nil {
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
			out := handleEvent(ctx, line, &bus, instr, attached, rules, live, cfg.cwd)
			if attacher != nil && out.Rules != nil && rulesChanged(out.Rules) {
				// The next tool call attaches from the new rules; a rule whose
				// content changed is injected again at its next match.
				attacher.Update(live.Book().Attached())
			}
			if err := enc.Encode(out); err != nil {
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

// rulesChanged reports whether a round changed the merged rules.
func rulesChanged(r *ruleChangesJSON) bool {
	return len(r.Added)+len(r.Removed)+len(r.Changed)+len(r.Shadowed)+len(r.Unshadowed) > 0
}

func handleEvent(ctx context.Context, line []byte, bus *lifecycle.Bus, instr *lifecycle.Subscription[instructions.Round],
	attached *lifecycle.Subscription[attach.Round], rules *lifecycle.Subscription[broker.Change], live *broker.Live, cwd string) sessionOut {
	triggers := live.TTSR()
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
		if ch, err := rules.From(results); err == nil {
			out.Rules = rulesOut(ch)
			for _, w := range ch.Warnings {
				out.Warnings = append(out.Warnings, w.String())
			}
		}
	case "providers":
		out.Providers = providersJSON(live.Result())
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
		out.Error = fmt.Sprintf("unknown event %q (want tools/post-execute, stream, turn_start or providers)", ev.Event)
	}
	return out
}

func nonNilChanges(c []instructions.Change) *[]instructions.Change {
	if c == nil {
		c = []instructions.Change{}
	}
	return &c
}
