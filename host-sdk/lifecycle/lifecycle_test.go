package lifecycle

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

func TestBus(t *testing.T) {
	var b Bus
	var got []PostExecute
	b.OnPostExecute("first", func(_ context.Context, ev PostExecute) (any, error) {
		got = append(got, ev)
		return "one", nil
	})
	off := b.OnPostExecute("failing", func(context.Context, PostExecute) (any, error) {
		return nil, errors.New("boom")
	})
	b.OnPostExecute("panicking", func(context.Context, PostExecute) (any, error) { panic("bad") })
	b.OnPostExecute("last", func(context.Context, PostExecute) (any, error) { return 2, nil })

	res := b.PostExecute(context.Background(), PostExecute{Tool: "write", Paths: []string{"a/b.go"}})
	if len(res) != 4 || res[0].Value != "one" || res[3].Value != 2 {
		t.Fatalf("results: %+v", res)
	}
	if res[1].Err == nil || !strings.Contains(res[1].Err.Error(), "failing") || res[2].Err == nil {
		t.Fatalf("errors: %+v", res)
	}
	if len(got) != 1 || got[0].Tool != "write" || got[0].Paths[0] != "a/b.go" {
		t.Fatalf("event: %+v", got)
	}
	off()
	off() // idempotent
	if res := b.PostExecute(context.Background(), PostExecute{}); len(res) != 3 || res[1].Hook != "panicking" {
		t.Fatalf("after unregister: %+v", res)
	}
}

func TestBusConcurrent(t *testing.T) {
	var b Bus
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			off := b.OnPostExecute("x", func(context.Context, PostExecute) (any, error) { return nil, nil })
			off()
		}()
		go func() { defer wg.Done(); b.PostExecute(context.Background(), PostExecute{}) }()
	}
	wg.Wait()
}
