package frontmatter

import (
	"maps"
	"slices"
	"sync"
)

// Cache limits: one generation keeps at most this many documents, and this
// many bytes of the inputs that produced them. A generation that reaches
// either parses the rest without keeping them.
const (
	CacheEntries = 10_000
	CacheBytes   = 16 << 20
)

// Cache remembers the documents parsed from recent inputs, so a provider
// process that discovers again after one of its files changed parses only the
// changed file: the others arrive with the same bytes and get the remembered
// document. YAML parsing is most of a small provider's work, and a live host
// re-runs discovery after every change to a provider's files.
//
// It keeps two generations: what was parsed since the last Rotate, and before
// it. A document not asked for in a whole generation is forgotten, so the
// cache holds about one discovery's files. The zero Cache is not usable; a
// nil *Cache parses without remembering. It is safe for concurrent use.
type Cache struct {
	mu         sync.Mutex
	cur, prev  map[string]Document
	curBytes   int
	entriesCap int
	bytesCap   int
	// Counts since the cache was made: inputs parsed, and inputs answered
	// from memory.
	parses, hits int
}

// Stats reports how many inputs the cache parsed, and how many it answered
// from memory, since it was made.
func (c *Cache) Stats() (parsed, remembered int) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.parses, c.hits
}

// NewCache returns an empty cache with the package's limits.
func NewCache() *Cache {
	return &Cache{cur: map[string]Document{}, entriesCap: CacheEntries, bytesCap: CacheBytes}
}

// Parse is the package's Parse, answered from the cache when data is the
// exact input of a document it holds. Each answer is the caller's own: its
// Meta and Warnings may be changed without touching the cache.
func (c *Cache) Parse(data []byte) Document {
	if c == nil {
		return Parse(data)
	}
	c.mu.Lock()
	doc, ok := c.cur[string(data)] // the conversion does not allocate
	if !ok {
		if doc, ok = c.prev[string(data)]; ok {
			c.keep(string(data), doc)
		}
	}
	if ok {
		c.hits++
	}
	c.mu.Unlock()
	if ok {
		return doc.clone()
	}
	doc = Parse(data)
	c.mu.Lock()
	c.parses++
	kept := c.keep(string(data), doc)
	c.mu.Unlock()
	if !kept {
		return doc // nobody else holds it
	}
	return doc.clone()
}

// keep stores doc in the current generation while it has room, and reports
// whether it did. The caller holds mu.
func (c *Cache) keep(input string, doc Document) bool {
	if _, ok := c.cur[input]; ok || len(c.cur) >= c.entriesCap || c.curBytes+len(input) > c.bytesCap {
		return false
	}
	c.cur[input] = doc
	c.curBytes += len(input)
	return true
}

// Rotate starts a new generation: what was not asked for since the previous
// Rotate is forgotten. A provider rotates at the start of each discovery.
func (c *Cache) Rotate() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.prev, c.cur, c.curBytes = c.cur, map[string]Document{}, 0
}

// clone copies what a caller could change: the metadata, deeply (YAML
// decodes to maps and slices of them), and the warnings. Copying a few keys
// costs a fraction of parsing them.
func (d Document) clone() Document {
	d.Meta = cloneMap(d.Meta)
	d.Warnings = slices.Clone(d.Warnings)
	return d
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return cloneMap(v)
	case map[any]any: // a mapping with a key that is not a string
		out := maps.Clone(v)
		for k, e := range out {
			out[k] = cloneValue(e)
		}
		return out
	case []any:
		out := slices.Clone(v)
		for i, e := range out {
			out[i] = cloneValue(e)
		}
		return out
	case []byte: // a !!binary value
		return slices.Clone(v)
	default:
		return v // scalars: strings, numbers, booleans, nil, times
	}
}
