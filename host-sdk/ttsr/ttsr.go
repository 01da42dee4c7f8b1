// Package ttsr implements TTSR ("time-traveling stream rules"): rules whose
// condition patterns are matched against the model's streamed output, so a
// host can abort the stream as soon as the model says something a rule is
// about, inject the rule, and retry.
//
// Triggers are Go RE2 regular expressions; inline flags such as a leading
// (?i), (?s) or (?m) work natively. A pattern that does not compile, or that
// can match empty text, is a warning and is skipped; a rule left with no usable
// pattern is dropped with a warning.
//
// # Streams and turns
//
// The host feeds deltas per stream ("text", "thinking", a tool call id, ...).
// Streams never mix: a match lies within one stream. TurnStart clears every
// stream's buffer, so text from an earlier turn can never complete a match.
// Before the first TurnStart the Manager is in turn 0.
//
// # The window
//
// Feed does not rescan the turn's output. It relies on the fact that a rule
// that has not fired had no match ending before the new delta, so a new match
// must end inside the delta; each Feed scans only the new text plus a
// look-back of Window bytes (default DefaultWindow, 4 KiB). Hence:
//
//   - every match at most Window bytes long is found as soon as its last byte
//     has been streamed, however the text was split into deltas;
//   - a longer match is found only if it happens to fit in one scan (the
//     look-back plus the delta); don't rely on it.
//
// Memory per stream is bounded by about twice the window, whatever the length
// of the turn. End-of-text assertions ($, \z, \b at the end) see the end of
// what has been streamed so far, as they would on the full text at that
// moment. An incomplete UTF-8 sequence at the end of a delta is held back until
// the rest of it arrives.
//
// # Prefilter
//
// For each pattern the Manager derives, from its syntax tree, literals one of
// which every match must contain (for (?i) patterns, the part that ASCII upper
// casing folds exactly). New text is searched once for all literals, and a
// pattern's regexp runs only while one of its literals lies in the window.
// Patterns with no such literal run on every delta. The triggers to run are
// collected from the literals currently in the window, so while nothing is
// close to matching a 16-byte delta costs well under a microsecond with 500
// rules, against milliseconds for running every regexp over the window (see
// BenchmarkFeed).
//
// # Firing
//
// A rule fires at most once per turn, and by default once per session
// (Once); EveryTurn and RepeatAfterTurns relax that.
package ttsr

import (
	"regexp"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/rulebroker/rulebroker/host-sdk/diag"
	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
)

// DefaultWindow is the default look-back, in bytes: the longest match that is
// guaranteed to be found.
const DefaultWindow = 4096

// Repeat says when a rule that has fired may fire again.
type Repeat struct {
	// after is the number of turns that must have started since the rule
	// fired; 0 means never (once per session).
	after int
}

// Once lets a rule fire once per session; the default.
func Once() Repeat { return Repeat{} }

// EveryTurn lets a rule fire again in every later turn (still at most once per
// turn).
func EveryTurn() Repeat { return Repeat{after: 1} }

// RepeatAfterTurns lets a rule fire again once n turns have started since it
// last fired. n < 1 is treated as 1 (EveryTurn).
func RepeatAfterTurns(n int) Repeat { return Repeat{after: max(n, 1)} }

func (r Repeat) String() string {
	switch r.after {
	case 0:
		return "once"
	case 1:
		return "every turn"
	default:
		return "after " + strconv.Itoa(r.after) + " turns"
	}
}

// Option configures a Manager.
type Option func(*config)

type config struct {
	window    int
	repeat    Repeat
	prefilter bool
}

// WithWindow sets the look-back in bytes (n < 1 means DefaultWindow).
func WithWindow(n int) Option {
	return func(c *config) {
		if n >= 1 {
			c.window = n
		}
	}
}

// WithRepeat sets the repeat policy for every rule.
func WithRepeat(r Repeat) Option { return func(c *config) { c.repeat = r } }

// WithoutPrefilter runs every pattern on every delta. It exists to measure
// what the prefilter buys; results are the same either way.
func WithoutPrefilter() Option { return func(c *config) { c.prefilter = false } }

// Match is one rule firing.
type Match struct {
	Rule    string // rule name
	Path    string // the rule's source file
	Content string // the rule's content, to inject
	Stream  string // the stream the match was found in
	Text    string // the matched text
	Pattern string // the condition pattern that matched
	Turn    int    // the turn it fired in (0 before the first TurnStart)
}

// rule is one of the Set's rules with its firing state in this Manager.
type rule struct {
	*setRule
	triggers  []*trigger
	fired     bool
	firedTurn int
}

// trigger is one compiled pattern of a rule.
type trigger struct {
	*pattern
	rule *rule
	// ctxRe is `(?s:.)(source)`, compiled on first need: it finds the
	// leftmost match starting after the scan's first rune, which then serves
	// as look-behind context for ^, \b and \B.
	ctxRe *regexp.Regexp
}

// Manager matches streamed output against TTSR rules. It is safe for
// concurrent use.
type Manager struct {
	mu       sync.Mutex
	cfg      config
	set      *Set
	rules    []*rule
	triggers []*trigger // every rule's triggers, in rule then pattern order
	warnings []diag.Warning
	turn     int
	streams  map[string]*stream
	upper    []byte // scratch: the ASCII-upper-cased new text

	// litTriggers[id] lists the triggers (indexes into triggers) that
	// literal id of the Set lets run; unfiltered lists those that always
	// run.
	litTriggers [][]int
	unfiltered  []int
	// Scratch for collecting a Feed's candidate triggers without
	// duplicates: mark[i] == gen means trigger i is already in cand.
	mark []uint32
	gen  uint32
	cand []int
}

// litIndex finds which literals start at a position.
type litIndex struct {
	single [256][]int       // one-byte literals by their byte
	pairs  map[uint16][]int // longer literals by their first two bytes
	bits   [1 << 16 / 64]uint64
}

func (x *litIndex) add(s string, id int) {
	if len(s) == 1 {
		x.single[s[0]] = append(x.single[s[0]], id)
		return
	}
	k := uint16(s[0])<<8 | uint16(s[1])
	if x.pairs == nil {
		x.pairs = map[uint16][]int{}
	}
	x.pairs[k] = append(x.pairs[k], id)
	x.bits[k/64] |= 1 << (k % 64)
}

// stream is one stream's state in the current turn.
type stream struct {
	buf     []byte // the tail of the stream's text; buf[0] is at offset base
	base    int64
	scanned int // buf[:scanned] has been scanned (always a rune boundary)
	// lastLit[id] is the offset of the latest occurrence of literal id, or
	// -1 once that has left the window; seen lists the ids that are not -1.
	// Keeping seen short is what makes a Feed's cost independent of how
	// many rules there are while nothing is about to match.
	lastLit []int64
	seen    []int
}

// saw records an occurrence of literal id at offset abs.
func (st *stream) saw(id int, abs int64) {
	if st.lastLit[id] < 0 {
		st.seen = append(st.seen, id)
	}
	st.lastLit[id] = abs
}

// New compiles rules and builds a Manager from them; only their Condition
// patterns are used (rules without any are ignored). Bad patterns become
// Warnings. A host that already holds a Set (a rulebook does) calls
// Set.NewManager instead, so nothing is compiled twice.
func New(rules []ruleset.Rule, opts ...Option) *Manager {
	set, warns := Compile(rules)
	m := set.NewManager(opts...)
	m.warnings = warns
	return m
}

// NewManager builds a Manager over the Set's rules. It compiles nothing: the
// Set's regexps are shared (a regexp is safe for concurrent use) and only the
// firing and stream state is the Manager's own. Its Warnings are empty; the
// Set's were returned by Compile.
func (s *Set) NewManager(opts ...Option) *Manager {
	m := &Manager{
		cfg:     config{window: DefaultWindow, prefilter: true},
		set:     s,
		streams: map[string]*stream{},
	}
	for _, o := range opts {
		o(&m.cfg)
	}
	m.build()
	return m
}

// build makes the Manager's rules and triggers from its Set.
func (m *Manager) build() {
	s := m.set
	m.litTriggers = make([][]int, len(s.lits))
	for i := range s.rules {
		r := &rule{setRule: &s.rules[i]}
		for j := range r.patterns {
			t := &trigger{pattern: &r.patterns[j], rule: r}
			r.triggers = append(r.triggers, t)
			id := len(m.triggers)
			m.triggers = append(m.triggers, t)
			if !m.cfg.prefilter || t.lits == nil {
				m.unfiltered = append(m.unfiltered, id)
				continue
			}
			for _, l := range t.lits {
				m.litTriggers[l] = append(m.litTriggers[l], id)
			}
		}
		m.rules = append(m.rules, r)
	}
	m.mark = make([]uint32, len(m.triggers))
	m.gen = 0
}

// Warnings lists the patterns and rules that were skipped.
func (m *Manager) Warnings() []diag.Warning {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]diag.Warning(nil), m.warnings...)
}

// Rules lists the names of the rules that can fire, in input order.
func (m *Manager) Rules() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, len(m.rules))
	for i, r := range m.rules {
		out[i] = r.name
	}
	return out
}

// Turn is the current turn number: how many times TurnStart has been called.
func (m *Manager) Turn() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.turn
}

// TurnStart starts a new turn: every stream's buffer is dropped, and rules
// whose repeat policy allows it become eligible again.
func (m *Manager) TurnStart() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.turn++
	clear(m.streams)
}

// eligible reports whether r may fire in the current turn.
func (m *Manager) eligible(r *rule) bool {
	if !r.fired {
		return true
	}
	a := m.cfg.repeat.after
	return a > 0 && m.turn-r.firedTurn >= a
}

// Feed appends delta to the stream's text for this turn and returns the rules
// that fire because of it, in rule order. A rule fires at most once per call.
func (m *Manager) Feed(streamName, delta string) []Match {
	m.mu.Lock()
	defer m.mu.Unlock()
	// Text is kept even while there are no rules: an Update may bring one
	// whose match began before it.
	if delta == "" {
		return nil
	}
	st := m.streams[streamName]
	if st == nil {
		st = &stream{lastLit: make([]int64, len(m.set.lits))}
		for i := range st.lastLit {
			st.lastLit[i] = -1
		}
		m.streams[streamName] = st
	}
	prev := st.scanned
	st.buf = append(st.buf, delta...)
	end := completeEnd(st.buf, prev)
	if end == prev {
		return nil // only part of a multi-byte rune so far
	}
	m.trackLits(st, prev, end)

	// The scan starts one rune before the look-back, so that every match of
	// up to window bytes starts after the scan's first rune, where ^, \b and
	// \B see the real preceding text. Only at the turn's true start is there
	// no preceding text to see.
	cut := prev - m.cfg.window - 1
	atStart := false
	if cut <= 0 && st.base == 0 {
		cut, atStart = 0, true
	} else {
		cut = max(cut, 0)
		for cut > 0 && !utf8.RuneStart(st.buf[cut]) {
			cut--
		}
	}
	cutAbs := st.base + int64(cut)
	text := st.buf[cut:end]

	var out []Match
	for _, i := range m.candidates(st, cutAbs) {
		t := m.triggers[i]
		r := t.rule
		if !m.eligible(r) || r.fired && r.firedTurn == m.turn {
			continue // includes "already fired through an earlier pattern"
		}
		loc := t.find(text, atStart)
		if loc == nil {
			continue
		}
		r.fired, r.firedTurn = true, m.turn
		out = append(out, Match{
			Rule: r.name, Path: r.path, Content: r.content, Stream: streamName,
			Text: string(text[loc[0]:loc[1]]), Pattern: t.source, Turn: m.turn,
		})
	}
	st.scanned = end
	m.trim(st)
	return out
}

// candidates returns, in trigger order, the triggers the prefilter lets run:
// those without literals, and those with a literal occurring at or after
// cutAbs, the start of the scan (a match in the scan contains it). Literals
// that have left the window are dropped from st.seen on the way.
func (m *Manager) candidates(st *stream, cutAbs int64) []int {
	m.gen++
	if m.gen == 0 { // wrapped: old marks could collide
		clear(m.mark)
		m.gen = 1
	}
	cand := append(m.cand[:0], m.unfiltered...)
	live := st.seen[:0]
	for _, id := range st.seen {
		if st.lastLit[id] < cutAbs {
			st.lastLit[id] = -1
			continue
		}
		live = append(live, id)
		for _, i := range m.litTriggers[id] {
			if m.mark[i] != m.gen {
				m.mark[i] = m.gen
				cand = append(cand, i)
			}
		}
	}
	st.seen = live
	if len(cand) > len(m.unfiltered) {
		slices.Sort(cand)
	}
	m.cand = cand
	return cand
}

// find returns the leftmost non-empty match in text whose look-behind context
// is right, or nil.
func (t *trigger) find(text []byte, atStart bool) []int {
	loc := t.re.FindIndex(text)
	if loc == nil || loc[0] > 0 || atStart {
		return nonEmpty(loc)
	}
	// The match starts at the scan's first rune, where the regexp saw no
	// preceding text: it may be an artefact of the cut (a false ^ or \b), and
	// it may hide a real match further on. Look again, with that first rune
	// as context.
	if t.ctxRe == nil {
		re, err := regexp.Compile(`(?s:.)(` + t.source + `)`)
		if err != nil {
			// The only way a valid source breaks the wrapper is by ending
			// inside \Q… (which quotes to the end), swallowing our ")".
			re, err = regexp.Compile(`(?s:.)(` + t.source + `\E)`)
		}
		if err != nil {
			return nil
		}
		t.ctxRe = re
	}
	sub := t.ctxRe.FindSubmatchIndex(text)
	if sub == nil {
		return nil
	}
	return nonEmpty(sub[2:4])
}

func nonEmpty(loc []int) []int {
	if loc == nil || loc[0] == loc[1] {
		return nil
	}
	return loc
}

// completeEnd is len(buf) minus a trailing incomplete UTF-8 sequence, but
// never less than from.
func completeEnd(buf []byte, from int) int {
	end := len(buf)
	for i := end - 1; i >= from && i >= end-utf8.UTFMax; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:end]) {
				return i
			}
			break
		}
	}
	return end
}

// trackLits records the latest occurrence of every prefilter literal that
// ends in buf[prev:end].
func (m *Manager) trackLits(st *stream, prev, end int) {
	set := m.set
	if len(set.lits) == 0 || !m.cfg.prefilter {
		return
	}
	from := max(prev-(set.maxLit-1), 0)
	raw := st.buf[from:end]
	m.upper = m.upper[:0]
	for _, b := range raw {
		m.upper = append(m.upper, asciiUpper(b))
	}
	up := m.upper
	for i := range raw {
		abs := st.base + int64(from+i)
		set.exact.scan(set.lits, raw, i, abs, st)
		set.folded.scan(set.lits, up, i, abs, st)
	}
}

// scan records literals of x that occur at text[i:]; a nil x has none.
func (x *litIndex) scan(lits []lit, text []byte, i int, abs int64, st *stream) {
	if x == nil {
		return
	}
	for _, id := range x.single[text[i]] {
		st.saw(id, abs)
	}
	if x.pairs == nil || i+1 >= len(text) {
		return
	}
	k := uint16(text[i])<<8 | uint16(text[i+1])
	if x.bits[k/64]&(1<<(k%64)) == 0 {
		return
	}
	for _, id := range x.pairs[k] {
		s := lits[id].s
		if len(text)-i >= len(s) && string(text[i:i+len(s)]) == s {
			st.saw(id, abs)
		}
	}
}

// trim drops text that no future scan can reach, once it is at least as long
// as what is kept, so copying costs O(1) per streamed byte.
func (m *Manager) trim(st *stream) {
	keep := st.scanned - (m.cfg.window + 2*utf8.UTFMax + max(m.set.maxLit, 1))
	if keep <= 0 || keep < len(st.buf)-keep {
		return
	}
	if tail := st.buf[keep:]; cap(st.buf) > 4*len(tail)+64 {
		// A huge delta grew the buffer: let that memory go.
		st.buf = append(make([]byte, 0, 2*len(tail)), tail...)
	} else {
		st.buf = st.buf[:copy(st.buf, tail)]
	}
	st.base += int64(keep)
	st.scanned -= keep
}
