package lifecycle

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/rulebroker/rulebroker/host-sdk/diag"
)

// note is a subscriber's typed reply for the tests.
type note struct {
	text  string
	count int
}

func (n note) Outcome() Outcome {
	if n.text == "" {
		return Outcome{}
	}
	return Outcome{Messages: []Message{{Role: "user", Text: n.text}}, Warnings: []diag.Warning{{Source: "note", Message: "w"}}}
}

func plain(o Outcome, err error) Hook {
	return func(context.Context, PostExecute) (Answer, error) { return Answer{Outcome: o}, err }
}

func TestBus(t *testing.T) {
	var b Bus
	var got []PostExecute
	first := Subscribe(&b, "first", func(_ context.Context, ev PostExecute) (note, error) {
		got = append(got, ev)
		return note{text: "one", count: len(ev.Paths)}, nil
	})
	off := b.OnPostExecute("failing", plain(Outcome{}, errors.New("boom")))
	panicking := Subscribe(&b, "panicking", func(context.Context, PostExecute) (note, error) { panic("bad") })
	b.OnPostExecute("last", plain(Outcome{Messages: []Message{{Role: "user", Text: "two"}}}, nil))

	res := b.PostExecute(context.Background(), PostExecute{Tool: "write", Paths: []string{"a/b.go"}})
	if len(res) != 4 || res[0].Hook != "first" || res[3].Messages[0].Text != "two" {
		t.Fatalf("results: %+v", res)
	}
	// The typed reply, without a type assertion.
	if n, err := first.From(res); err != nil || n.text != "one" || n.count != 1 {
		t.Fatalf("first.From = %+v, %v", n, err)
	}
	// Its Outcome is on the result too, for a host that only injects.
	if res[0].Messages[0].Text != "one" || len(res[0].Warnings) != 1 {
		t.Fatalf("outcome: %+v", res[0].Outcome)
	}
	if res[1].Err == nil || !strings.Contains(res[1].Err.Error(), "failing") || res[2].Err == nil {
		t.Fatalf("errors: %+v", res)
	}
	if _, err := panicking.From(res); err == nil || !strings.Contains(err.Error(), "panic: bad") {
		t.Fatalf("panicking.From error = %v", err)
	}
	if os := Outcomes(res); len(os) != 2 || os[1].Messages[0].Text != "two" {
		t.Fatalf("Outcomes = %+v", os)
	}
	if len(got) != 1 || got[0].Tool != "write" || got[0].Paths[0] != "a/b.go" {
		t.Fatalf("event: %+v", got)
	}
	off()
	off() // idempotent
	first.Unsubscribe()
	res = b.PostExecute(context.Background(), PostExecute{})
	if len(res) != 2 || res[0].Hook != "panicking" || res[1].Hook != "last" {
		t.Fatalf("after unregister: %+v", res)
	}
	if _, err := first.From(res); !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("From after Unsubscribe: %v", err)
	}
}

func TestBusConcurrent(t *testing.T) {
	var b Bus
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			s := Subscribe(&b, "x", func(context.Context, PostExecute) (note, error) { return note{}, nil })
			s.Unsubscribe()
		}()
		go func() { defer wg.Done(); b.PostExecute(context.Background(), PostExecute{}) }()
	}
	wg.Wait()
}
