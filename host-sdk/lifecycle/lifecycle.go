// Package lifecycle is how host-side components hook into an agent host's
// events. Today there is one: tools/post-execute, raised after every tool
// call with the tool's name and the paths it touched. A component (the
// instruction reconciler, say) registers a hook; the host raises the event
// through a Bus and injects whatever the hooks return.
package lifecycle

import (
	"context"
	"fmt"
	"sync"
)

// EventToolsPostExecute is the name of the event raised after a tool ran.
const EventToolsPostExecute = "tools/post-execute"

// PostExecute is the tools/post-execute event.
type PostExecute struct {
	Tool string `json:"tool"`
	// Paths the tool touched, absolute or relative to the session's cwd.
	Paths []string `json:"paths"`
}

// Hook handles tools/post-execute. Its value is the hook's answer for the host
// to act on: the instruction reconciler returns an instructions.Round, whose
// Message is nil when there is nothing to inject.
type Hook func(ctx context.Context, ev PostExecute) (any, error)

// Lifecycle is what a component registers with. The returned function
// unregisters the hook.
type Lifecycle interface {
	OnPostExecute(name string, hook Hook) (unregister func())
}

// Result is one hook's answer to an event.
type Result struct {
	Hook  string // the name the hook registered under
	Value any
	Err   error
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
		v, err := call(ctx, e.hook, ev)
		if err != nil {
			err = fmt.Errorf("%s hook %q: %w", EventToolsPostExecute, e.name, err)
		}
		out = append(out, Result{Hook: e.name, Value: v, Err: err})
	}
	return out
}

func call(ctx context.Context, h Hook, ev PostExecute) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	return h(ctx, ev)
}
