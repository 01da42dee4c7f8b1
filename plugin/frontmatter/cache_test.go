package frontmatter

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
)

func TestCacheAnswersTheSameBytesWithoutParsing(t *testing.T) {
	c := NewCache()
	data := []byte("---\ndescription: d\nglobs: [a, b]\nnested: {k: [1, {x: y}]}\n---\nbody\n")
	first := c.Parse(data)
	second := c.Parse(append([]byte(nil), data...)) // equal bytes, another slice
	if parsed, remembered := c.Stats(); parsed != 1 || remembered != 1 {
		t.Fatalf("parsed %d, remembered %d; want 1 and 1", parsed, remembered)
	}
	if want := Parse(data); !reflect.DeepEqual(first, want) || !reflect.DeepEqual(second, want) {
		t.Fatalf("cached documents differ from Parse:\n%#v\n%#v\nwant %#v", first, second, want)
	}
	if c.Parse([]byte("---\ndescription: other\n---\nbody\n")); c.parses != 2 {
		t.Fatalf("other bytes were not parsed: %d parses", c.parses)
	}
}

func TestCacheAnswersAreTheCallersOwn(t *testing.T) {
	c := NewCache()
	data := []byte("---\nglobs: [a]\nnested: {k: [1]}\nbad: : :\n---\nbody\n")
	doc := c.Parse(data)
	doc.Meta["added"] = true
	for _, v := range doc.Meta {
		switch v := v.(type) {
		case []any:
			v[0] = "changed"
		case map[string]any:
			v["k"].([]any)[0] = "changed"
		}
	}
	if len(doc.Warnings) > 0 {
		doc.Warnings[0] = "changed"
	}
	if again, want := c.Parse(data), Parse(data); !reflect.DeepEqual(again, want) {
		t.Fatalf("a caller's change reached the cache:\n%#v\nwant %#v", again, want)
	}
}

func TestCacheForgetsWhatAWholeGenerationDidNotAskFor(t *testing.T) {
	c := NewCache()
	kept, dropped := []byte("---\na: 1\n---\nkept\n"), []byte("---\na: 2\n---\ndropped\n")
	c.Parse(kept)
	c.Parse(dropped)
	c.Rotate()
	c.Parse(kept) // asked for again: carried into the new generation
	c.Rotate()
	c.Parse(kept)
	c.Parse(dropped)
	if c.parses != 3 {
		t.Fatalf("%d parses, want 3 (each input once, and the dropped one again)", c.parses)
	}
}

func TestCacheStopsKeepingAtItsCaps(t *testing.T) {
	c := NewCache()
	c.entriesCap = 2
	for i := range 3 {
		c.Parse(fmt.Appendf(nil, "---\na: %d\n---\nx\n", i))
	}
	if len(c.cur) != 2 {
		t.Fatalf("kept %d documents, want the cap, 2", len(c.cur))
	}
	c = NewCache()
	c.bytesCap = 10
	c.Parse([]byte("---\na: 1\n---\nlonger than ten bytes\n"))
	if len(c.cur) != 0 {
		t.Fatalf("kept an input over the byte cap")
	}
	var nilCache *Cache
	if doc := nilCache.Parse([]byte("body")); doc.Body != "body" {
		t.Fatalf("a nil cache does not parse: %#v", doc)
	}
	nilCache.Rotate()
}

func TestCacheIsSafeForConcurrentUse(t *testing.T) {
	c := NewCache()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				c.Parse(fmt.Appendf(nil, "---\na: %d\n---\nx\n", j%5))
				if j%17 == i {
					c.Rotate()
				}
			}
		}()
	}
	wg.Wait()
}
