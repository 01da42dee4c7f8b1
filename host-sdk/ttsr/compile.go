package ttsr

import (
	"fmt"
	"regexp"
	"regexp/syntax"

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
	exact  litIndex
	folded litIndex
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
func Compile(rules []ruleset.Rule) (*Set, []diag.Warning) {
	s := &Set{inputs: make([]Compiled, len(rules))}
	var warns []diag.Warning
	litIDs := map[lit]int{}
	for i, r := range rules {
		c := Compiled{Rule: r}
		c.Rule.Condition = nil
		sr := setRule{name: r.Name, path: r.Path, content: r.Content}
		for _, p := range r.Condition {
			re, tree, err := compilePattern(p)
			if err != nil {
				c.Skipped = append(c.Skipped, ruleWarning(r, fmt.Sprintf("rule %q: condition %q is skipped: %v", r.Name, p, err)))
				continue
			}
			c.Rule.Condition = append(c.Rule.Condition, p)
			sr.patterns = append(sr.patterns, pattern{source: p, re: re, lits: s.prefilter(tree, litIDs)})
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
	return s, warns
}

func ruleWarning(r ruleset.Rule, msg string) diag.Warning {
	return diag.Warning{Source: r.Provider, Path: r.Path, Message: msg}
}

// Len is the number of input rules.
func (s *Set) Len() int { return len(s.inputs) }

// Rule returns what Compile made of input rule i (0 <= i < Len()).
func (s *Set) Rule(i int) Compiled { return s.inputs[i] }

// prefilter registers the required literals of a pattern's syntax tree and
// returns their ids.
func (s *Set) prefilter(tree *syntax.Regexp, ids map[lit]int) []int {
	ls, ok := requiredLits(tree.Simplify())
	if !ok {
		return nil
	}
	out := make([]int, 0, len(ls))
	for _, l := range ls {
		id, seen := ids[l]
		if !seen {
			id = len(s.lits)
			ids[l] = id
			s.lits = append(s.lits, l)
			s.maxLit = max(s.maxLit, len(l.s))
			if l.fold {
				s.folded.add(l.s, id)
			} else {
				s.exact.add(l.s, id)
			}
		}
		out = append(out, id)
	}
	return out
}
