package ttsr

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"

	"github.com/rulebroker/rulebroker/host-sdk/diag"
	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
)

// Set is a compiled set of TTSR rules: every usable condition pattern
// compiled once, with the literals the prefilter looks for. A Set is immutable,
// so one Set serves any number of Managers (one per session, say) without
// compiling again.
type Set struct {
	inputs []Compiled // one per input rule, in input order
	rules  []setRule  // the rules with at least one usable pattern, in input order

	// The prefilter's distinct literals, indexed by their first one or two
	// bytes, separately for exact and case-folded literals.
	lits   []lit
	maxLit int
	// Each index is a few tens of kilobytes: made only when a literal of its
	// kind exists, so a rule set without TTSR rules costs next to nothing.
	exact  *litIndex
	folded *litIndex

	// compiled holds every distinct condition pattern's compilation, for
	// Recompile to reuse.
	compiled map[string]compiledPattern
}

// compiledPattern is what compiling one pattern gave: the program and the
// prefilter's required literals (ok false: it cannot help), or the error.
type compiledPattern struct {
	re   *regexp.Regexp
	lits []lit
	ok   bool
	err  error
}

// Compiled is what Compile made of one input rule.
type Compiled struct {
	// Rule is the input rule with Condition narrowed to the patterns that
	// compile (empty when none does, or the rule had none).
	Rule ruleset.Rule
	// Skipped has one warning per pattern that does not compile.
	Skipped []diag.Warning
}

// Usable reports whether the rule has a pattern that can fire.
func (c Compiled) Usable() bool { return len(c.Rule.Condition) > 0 }

type setRule struct {
	name, path, content string
	patterns            []pattern
}

// pattern is one compiled condition.
type pattern struct {
	source string
	re     *regexp.Regexp
	lits   []int // ids into Set.lits; nil means the prefilter cannot help
}

// Compile compiles the condition patterns of rules (rules without any are
// kept in Rule(i) but never fire). A pattern that does not compile, or that can
// match empty text, is skipped with a warning; a rule left with no usable
// pattern is a further warning. Warnings are in input order and name each
// rule's provider and file.
func Compile(rules []ruleset.Rule) (*Set, []diag.Warning) { return compile(rules, nil) }

// Recompile is Compile for the next version of a rule list: a pattern s
// compiled is not compiled again, so a change of rules in a long session
// costs only its new patterns. The new Set does not refer to s.
func (s *Set) Recompile(rules []ruleset.Rule) (*Set, []diag.Warning) { return compile(rules, s) }

func compile(rules []ruleset.Rule, prev *Set) (*Set, []diag.Warning) {
	s := &Set{inputs: make([]Compiled, len(rules)), compiled: map[string]compiledPattern{}}
	var warns []diag.Warning
	litIDs := map[lit]int{}
	for i, r := range rules {
		c := Compiled{Rule: r}
		c.Rule.Condition = nil
		sr := setRule{name: r.Name, path: r.Path, content: r.Content}
		for _, p := range r.Condition {
			cp := s.compilePattern(p, prev)
			if cp.err != nil {
				c.Skipped = append(c.Skipped, ruleWarning(r, fmt.Sprintf("rule %q: condition %q is skipped: %v", r.Name, p, cp.err)))
				continue
			}
			c.Rule.Condition = append(c.Rule.Condition, p)
			sr.patterns = append(sr.patterns, pattern{source: p, re: cp.re, lits: s.prefilter(cp, litIDs)})
		}
		s.inputs[i] = c
		warns = append(warns, c.Skipped...)
		switch {
		case len(r.Condition) == 0:
		case len(sr.patterns) == 0:
			warns = append(warns, ruleWarning(r, fmt.Sprintf("rule %q: no condition pattern compiles, so it never fires", r.Name)))
		default:
			s.rules = append(s.rules, sr)
		}
	}
	s.index(prev)
	return s, warns
}

// compilePattern compiles p once per Set, taking prev's compilation when it
// has one. A compiled *regexp.Regexp is safe to share between Sets.
func (s *Set) compilePattern(p string, prev *Set) compiledPattern {
	if cp, ok := s.compiled[p]; ok {
		return cp
	}
	cp, ok := compiledPattern{}, false
	if prev != nil {
		cp, ok = prev.compiled[p]
	}
	if !ok {
		var tree *syntax.Regexp
		cp.re, tree, cp.err = compilePattern(p)
		if cp.err == nil {
			cp.lits, cp.ok = requiredLits(tree.Simplify())
		}
	}
	s.compiled[p] = cp
	return cp
}

func ruleWarning(r ruleset.Rule, msg string) diag.Warning {
	return diag.Warning{Source: r.Provider, Path: r.Path, Message: msg}
}

// Len is the number of input rules.
func (s *Set) Len() int { return len(s.inputs) }

// Rule returns what Compile made of input rule i (0 <= i < Len()).
func (s *Set) Rule(i int) Compiled { return s.inputs[i] }

// prefilter registers the required literals of a compiled pattern and
// returns their ids.
func (s *Set) prefilter(cp compiledPattern, ids map[lit]int) []int {
	if !cp.ok {
		return nil
	}
	out := make([]int, 0, len(cp.lits))
	for _, l := range cp.lits {
		id, seen := ids[l]
		if !seen {
			id = len(s.lits)
			ids[l] = id
			s.lits = append(s.lits, l)
			s.maxLit = max(s.maxLit, len(l.s))
		}
		out = append(out, id)
	}
	return out
}

// index builds the literal indexes, or takes prev's when its literals are
// the same (the usual case after an edit of a rule without a condition): an
// index is immutable once built.
func (s *Set) index(prev *Set) {
	if prev != nil && slices.Equal(prev.lits, s.lits) {
		s.exact, s.folded = prev.exact, prev.folded
		return
	}
	for id, l := range s.lits {
		index := &s.exact
		if l.fold {
			index = &s.folded
		}
		if *index == nil {
			*index = &litIndex{}
		}
		(*index).add(l.s, id)
	}
}
