package ttsr

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"unicode"
)

// ErrMatchesEmpty is wrapped by CompilePattern's error for a pattern that can
// match empty text. Such a pattern would "match" before the model has said
// anything (or at any word boundary), so it can never be a useful trigger.
var ErrMatchesEmpty = errors.New("pattern can match empty text")

// CompilePattern compiles one TTSR trigger with the rules the Manager uses:
// Go RE2 syntax (regexp.Compile), and the pattern must not be able to match
// empty text. The rulebook uses it to decide whether a rule's conditions are
// usable, so both packages agree on what a bad pattern is.
func CompilePattern(pattern string) (*regexp.Regexp, error) {
	re, _, err := compilePattern(pattern)
	return re, err
}

// compilePattern is CompilePattern that also returns the parsed syntax tree,
// so the prefilter can derive its literals without parsing again.
func compilePattern(pattern string) (*regexp.Regexp, *syntax.Regexp, error) {
	if pattern == "" {
		return nil, nil, fmt.Errorf("empty pattern: %w", ErrMatchesEmpty)
	}
	// regexp.Compile parses with syntax.Perl, so parsing the same way gives the
	// tree the compiled program came from.
	tree, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, nil, err
	}
	if minLen(tree) == 0 {
		return nil, nil, fmt.Errorf("%q: %w", pattern, ErrMatchesEmpty)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, nil, err
	}
	return re, tree, nil
}

// minLen is the fewest runes a match of re can span. It saturates instead of
// overflowing on large repeat counts.
func minLen(re *syntax.Regexp) int {
	const limit = 1 << 30
	switch re.Op {
	case syntax.OpNoMatch:
		return limit // never matches, so in particular never matches empty text
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minLen(re.Sub[0])
	case syntax.OpRepeat:
		n := minLen(re.Sub[0])
		if n == 0 || re.Min <= 0 {
			return 0
		}
		if n >= limit/re.Min {
			return limit
		}
		return n * re.Min
	case syntax.OpConcat:
		sum := 0
		for _, s := range re.Sub {
			sum += minLen(s)
			if sum >= limit {
				return limit
			}
		}
		return sum
	case syntax.OpAlternate:
		best := limit
		for _, s := range re.Sub {
			best = min(best, minLen(s))
		}
		return best
	default: // empty-width assertions, OpEmptyMatch, OpStar, OpQuest
		return 0
	}
}

// lit is a literal that every match of some pattern contains. A fold literal
// is stored in ASCII upper case and is searched for in an ASCII-upper-cased
// view of the text; see foldSafe for why that is exact.
type lit struct {
	s    string
	fold bool
}

// maxLits caps how many alternatives a required-literal set may have before it
// stops being a useful filter.
const maxLits = 32

// requiredLits returns a set of literals such that every match of re contains
// at least one of them, or ok=false when no such set is known (the pattern is
// then checked on every delta).
func requiredLits(re *syntax.Regexp) (lits []lit, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			return []lit{{s: string(re.Rune)}}, true
		}
		// Split at runes the upper-cased view cannot fold exactly and keep
		// the longest safe piece.
		best, cur := "", []rune(nil)
		flush := func() {
			if s := string(cur); len(s) > len(best) {
				best = s
			}
			cur = cur[:0]
		}
		for _, r := range re.Rune {
			if !foldSafe(r) {
				flush()
				continue
			}
			cur = append(cur, asciiUpperRune(r))
		}
		flush()
		if best == "" {
			return nil, false
		}
		return []lit{{s: best, fold: true}}, true
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLits(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min < 1 {
			return nil, false
		}
		return requiredLits(re.Sub[0])
	case syntax.OpConcat:
		var best []lit
		for _, s := range re.Sub {
			l, ok := requiredLits(s)
			if ok && betterLits(l, best) {
				best = l
			}
		}
		return best, best != nil
	case syntax.OpAlternate:
		var all []lit
		for _, s := range re.Sub {
			l, ok := requiredLits(s)
			if !ok {
				return nil, false
			}
			all = append(all, l...)
			if len(all) > maxLits {
				return nil, false
			}
		}
		return all, len(all) > 0
	default:
		return nil, false
	}
}

// betterLits prefers the set whose shortest literal is longest (rarer in
// text), then the smaller set.
func betterLits(a, b []lit) bool {
	if b == nil {
		return true
	}
	ma, mb := shortest(a), shortest(b)
	if ma != mb {
		return ma > mb
	}
	return len(a) < len(b)
}

func shortest(l []lit) int {
	n := 1 << 30
	for _, x := range l {
		n = min(n, len(x.s))
	}
	return n
}

// foldSafe reports whether a case-insensitive match of r is exactly "the same
// byte in the ASCII-upper-cased text": r has no case variants at all, or its
// only variants are one ASCII lower/upper pair. 's' is not safe (it folds to
// U+017F ſ), nor is 'k' (U+212A KELVIN SIGN), nor any non-ASCII letter.
func foldSafe(r rune) bool {
	n := 0
	for f := unicode.SimpleFold(r); ; f = unicode.SimpleFold(f) {
		n++
		if f == r {
			break
		}
		if f >= 0x80 || r >= 0x80 {
			return false
		}
	}
	return n <= 2
}

func asciiUpperRune(r rune) rune {
	if 'a' <= r && r <= 'z' {
		return r - 'a' + 'A'
	}
	return r
}

func asciiUpper(b byte) byte {
	if 'a' <= b && b <= 'z' {
		return b - 'a' + 'A'
	}
	return b
}
