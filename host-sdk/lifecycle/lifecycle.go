// Package lifecycle is how host-side components hook into an agent host's
// events. Today there is one: tools/post-execute, raised after every tool
// call with the tool's name and the paths it touched. A component (the
// instruction reconciler, say) subscribes; the host raises the event through
// a Bus and injects the messages the subscribers answer with.
//
// Every answer has the same shape for a host that only injects and warns (an
// Outcome: messages and warnings), and each subscriber's own typed reply is
// reachable without a type assertion through the Subscription that Subscribe
// returns.
//
// Subscribers answer in registration order, and a host injects their
// messages in that order; so a host registers the instruction reconciler
// first, then whatever attaches files by glob, then live rule updates, and the
// model reads them in that order.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/rulebroker/rulebroker/host-sdk/diag"
)

// EventToolsPostExecute is the name of the event raised after a tool ran.
const EventToolsPostExecute = "tools/post-execute"

// PostExecute is the tools/post-execute event.
type PostExecute struct {
	Tool string `json:"tool"`
	// Paths the tool touched, absolute or relative to the session's cwd.
	Paths []string `json:"paths"`
}

// Message is one message a subscriber asks the host to inject into the
// conversation.
type Message struct {
	Role string `json:"role"` // "user"
	// Text is ready to inject as is (framed as a <system-reminder>).
	Text string `json:"text"`
}

// Outcome is what every subscriber's answer offers a host: the messages to
// inject, in order, and the warnings to show. The zero Outcome asks for
// nothing.
type Outcome struct {
	Messages []Message
	Warnings []diag.Warning
}

// Reply is a subscriber's typed answer; whatever else it carries, it can say
// what to inject.
type Reply interface {
	Outcome() Outcome
}

// Answer is one subscriber's answer as an event source handles it: the
// Outcome, plus (for a subscriber registered with Subscribe) its typed reply,
// which only the Subscription can read.
type Answer struct {
	Outcome
	from  any // the *Subscription that produced it, if any
	reply any // that Subscription's reply, of its type
}

// Hook handles tools/post-execute.
type Hook func(ctx context.Context, ev PostExecute) (Answer, error)

// Lifecycle is what a component subscribes with. A Lifecycle runs hooks in
// registration order. The returned function unregisters the hook.
type Lifecycle interface {
	OnPostExecute(name string, hook Hook) (unregister func())
}

// Result is one hook's answer to an event.
type Result struct {
	Hook string // the name the hook registered under
	Answer
	Err error
}

// Subscription is a subscriber registered with Subscribe; it reads the
// subscriber's typed reply out of an event's results.
type Subscription[T Reply] struct {
	name       string
	unregister func()
}

// ErrNoAnswer is returned by Subscription.From when the results hold no answer
// from that subscription (it was unsubscribed, or the results are another
// Lifecycle's).
var ErrNoAnswer = errors.New("lifecycle: no answer from this subscriber")

// Subscribe registers hook on lc under name. Its typed reply is read from the
// results of an event with the returned Subscription's From.
func Subscribe[T Reply](lc Lifecycle, name string, hook func(context.Context, PostExecute) (T, error)) *Subscription[T] {
	s := &Subscription[T]{name: name}
	s.unregister = lc.OnPostExecute(name, func(ctx context.Context, ev PostExecute) (a Answer, err error) {
		a.from = s
		// Recover here too, so that a panicking subscriber still answers as
		// itself and From reports the panic rather than ErrNoAnswer.
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		reply, err := hook(ctx, ev)
		a.reply = reply
		if err == nil {
			a.Outcome = reply.Outcome()
		}
		return a, err
	})
	return s
}

// Name is the name the subscription registered under.
func (s *Subscription[T]) Name() string { return s.name }

// Unsubscribe removes the hook; calling it again does nothing.
func (s *Subscription[T]) Unsubscribe() { s.unregister() }

// From returns this subscriber's reply among results, or its error. With no
// answer from it, the error is ErrNoAnswer.
func (s *Subscription[T]) From(results []Result) (T, error) {
	var zero T
	for _, r := range results {
		if r.from != s {
			continue
		}
		if r.Err != nil {
			return zero, r.Err
		}
		reply, _ := r.reply.(T) // always a T: only Subscribe sets it
		return reply, nil
	}
	return zero, ErrNoAnswer
}

// Bus is an in-process Lifecycle: components register on it and the host
// calls PostExecute when a tool finishes. The zero value is ready to use and
// it is safe for concurrent use.
type Bus struct {
	mu    sync.Mutex
	hooks []entry
	next  int
}

type entry struct {
	id   int
	name string
	hook Hook
}

var _ Lifecycle = (*Bus)(nil)

// OnPostExecute registers hook; hooks run in registration order.
func (b *Bus) OnPostExecute(name string, hook Hook) func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	id := b.next
	b.hooks = append(b.hooks, entry{id: id, name: name, hook: hook})
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for i, e := range b.hooks {
			if e.id == id {
				b.hooks = append(b.hooks[:i:i], b.hooks[i+1:]...)
				return
			}
		}
	}
}

// PostExecute raises tools/post-execute and returns every hook's result in
// registration order. A failing hook costs only its own result; a panicking
// hook is reported as an error rather than taking the host down.
func (b *Bus) PostExecute(ctx context.Context, ev PostExecute) []Result {
	b.mu.Lock()
	hooks := append([]entry(nil), b.hooks...)
	b.mu.Unlock()
	out := make([]Result, 0, len(hooks))
	for _, e := range hooks {
		a, err := call(ctx, e.hook, ev)
		if err != nil {
			err = fmt.Errorf("%s hook %q: %w", EventToolsPostExecute, e.name, err)
		}
		out = append(out, Result{Hook: e.name, Answer: a, Err: err})
	}
	return out
}

// Outcomes returns the outcomes of the results that succeeded, in order: what
// a host that only injects and warns needs.
func Outcomes(results []Result) []Outcome {
	var out []Outcome
	for _, r := range results {
		if r.Err == nil {
			out = append(out, r.Outcome)
		}
	}
	return out
}

func call(ctx context.Context, h Hook, ev PostExecute) (a Answer, err error) {
	defer func() {
		if r := recover(); r != nil {
			a, err = Answer{}, fmt.Errorf("panic: %v", r)
		}
	}()
	return h(ctx, ev)
}
