// Package rulebook classifies a host's merged rules, renders the rules
// section of the system prompt and resolves rule:// URLs.
//
// The input is the broker's merged, non-shadowed rules in merge order. Each
// rule gets exactly one Class:
//
//   - ttsr: it has a condition pattern (condition, else ttsr_trigger /
//     ttsrTrigger), whatever else it has. A rule whose every pattern fails to
//     compile is a warning and falls through to the next class that fits, so
//     its text is not silently lost; a rule with some bad patterns keeps the
//     good ones, with a warning per bad one.
//   - always: otherwise, alwaysApply is true.
//   - rulebook: otherwise, the description is not blank.
//   - none: otherwise. The rule is unreachable, and a Note says so.
package rulebook

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rulebroker/rulebroker/host-sdk/diag"
	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
	"github.com/rulebroker/rulebroker/host-sdk/ttsr"
)

// Class is a rule's class.
type Class string

const (
	ClassAlways   Class = "always"
	ClassRulebook Class = "rulebook"
	ClassTTSR     Class = "ttsr"
	ClassNone     Class = "none"
)

// Entry is one input rule with its class.
type Entry struct {
	// Rule is the rule as given; for a TTSR rule, Rule.Condition still holds
	// every pattern, bad ones included (see Book.TTSR for the usable ones).
	Rule  ruleset.Rule
	Class Class
}

// Book is a classified rule set. It is immutable after New and so safe for
// concurrent use.
type Book struct {
	entries  []Entry
	always   []ruleset.Rule
	rulebook []ruleset.Rule
	ttsr     []ruleset.Rule // Condition narrowed to the patterns that compile
	none     []ruleset.Rule
	// triggers holds every condition compiled, once: NewTTSR builds its
	// managers from it.
	triggers *ttsr.Set
	warnings []diag.Warning
	notes    []diag.Warning
	// byName resolves rule:// over rulebook then always-apply rules, the
	// order the spec's handler lists them; the first rule with a name wins.
	byName    map[string]ruleset.Rule
	available []string
	// classes holds the class of the first rule of each name, so Class is a
	// map lookup: a host asks it once per rule, and a scan per call made
	// listing n rules cost n².
	classes map[string]Class
}

// New classifies rules, which are the broker's rules that won their names,
// in merge order. Warnings name the provider each rule came from.
func New(rules []ruleset.Rule) *Book {
	b := &Book{byName: map[string]ruleset.Rule{}, classes: make(map[string]Class, len(rules))}
	// The compile warnings are not used as such: classify reports each
	// rule's skipped patterns next to what became of the rule.
	b.triggers, _ = ttsr.Compile(rules)
	seen := map[string]bool{}
	var dups []ruleset.Rule
	for i, r := range rules {
		if seen[r.Name] {
			dups = append(dups, r)
		}
		seen[r.Name] = true
		c := b.classify(r, b.triggers.Rule(i))
		b.entries = append(b.entries, Entry{Rule: r, Class: c})
		if _, ok := b.classes[r.Name]; !ok {
			b.classes[r.Name] = c
		}
	}
	for _, r := range b.rulebook {
		b.index(r)
	}
	for _, r := range b.always {
		b.index(r)
	}
	slices.Sort(b.available)
	// The broker removes shadowed rules, so a duplicate means a caller
	// bypassed it; say which copy rule:// serves (rulebook before
	// always-apply, which need not be the first copy).
	for _, r := range dups {
		served := "none of them"
		if s, ok := b.byName[r.Name]; ok {
			served = "the one from " + s.Path
		}
		b.warnings = append(b.warnings, warn(r, fmt.Sprintf("rule %q is defined again; rule:// serves %s", r.Name, served)))
	}
	return b
}

func (b *Book) index(r ruleset.Rule) {
	if _, dup := b.byName[r.Name]; dup || r.Name == "" {
		return
	}
	b.byName[r.Name] = r
	b.available = append(b.available, r.Name)
}

// classify files r under its class and returns it; compiled is what
// ttsr.Compile made of r's conditions.
func (b *Book) classify(r ruleset.Rule, compiled ttsr.Compiled) Class {
	if len(r.Condition) > 0 {
		b.warnings = append(b.warnings, compiled.Skipped...)
		if compiled.Usable() {
			b.ttsr = append(b.ttsr, compiled.Rule)
			return ClassTTSR
		}
		b.warnings = append(b.warnings, warn(r, fmt.Sprintf(
			"rule %q: no condition pattern compiles, so it is not a stream trigger; treating it as %s",
			r.Name, fallbackClass(r))))
	}
	switch fallbackClass(r) {
	case ClassAlways:
		b.always = append(b.always, r)
		return ClassAlways
	case ClassRulebook:
		b.rulebook = append(b.rulebook, r)
		return ClassRulebook
	}
	b.none = append(b.none, r)
	why := "it has no description, alwaysApply or condition"
	if len(r.Condition) > 0 {
		why = "none of its condition patterns compiles, and it has no description or alwaysApply"
	}
	b.notes = append(b.notes, warn(r, fmt.Sprintf("rule %q is unreachable: %s", r.Name, why)))
	return ClassNone
}

// fallbackClass is r's class ignoring its conditions.
func fallbackClass(r ruleset.Rule) Class {
	switch {
	case r.AlwaysApply:
		return ClassAlways
	case strings.TrimSpace(r.Description) != "":
		return ClassRulebook
	default:
		return ClassNone
	}
}

func warn(r ruleset.Rule, msg string) diag.Warning {
	return diag.Warning{Source: r.Provider, Path: r.Path, Message: msg}
}

// Entries returns every input rule with its class, in input order.
func (b *Book) Entries() []Entry { return slices.Clone(b.entries) }

// Class returns the class of the first rule called name; false if there is
// none.
func (b *Book) Class(name string) (Class, bool) {
	c, ok := b.classes[name]
	return c, ok
}

// Always returns the always-apply rules in merge order.
func (b *Book) Always() []ruleset.Rule { return slices.Clone(b.always) }

// Rulebook returns the rulebook rules in merge order.
func (b *Book) Rulebook() []ruleset.Rule { return slices.Clone(b.rulebook) }

// TTSR returns the TTSR rules in merge order, each with Condition narrowed to
// the patterns that compile.
func (b *Book) TTSR() []ruleset.Rule { return slices.Clone(b.ttsr) }

// Unclassified returns the rules in no class, in merge order.
func (b *Book) Unclassified() []ruleset.Rule { return slices.Clone(b.none) }

// NewTTSR builds a TTSR manager over the TTSR rules from the patterns New
// compiled, without compiling them again; call it once per session. Bad
// patterns were already reported in Warnings, so the manager has none of its
// own.
func (b *Book) NewTTSR(opts ...ttsr.Option) *ttsr.Manager { return b.triggers.NewManager(opts...) }

// Warnings lists problems with the rules: bad condition patterns and
// duplicate names. Each names the rule and its file.
func (b *Book) Warnings() []diag.Warning { return slices.Clone(b.warnings) }

// Notes lists things a host may show the user that are not errors: the rules
// that are unreachable and why.
func (b *Book) Notes() []diag.Warning { return slices.Clone(b.notes) }

// Available returns the names rule:// resolves, sorted.
func (b *Book) Available() []string { return slices.Clone(b.available) }

// Resource is a resolved rule:// URL.
type Resource struct {
	URL         string
	Name        string
	Content     string // the rule's raw content (frontmatter removed)
	ContentType string // always "text/markdown"
	Path        string // the rule's source file
	Class       Class  // ClassRulebook or ClassAlways
}

// Scheme is the prefix of a rule URL.
const Scheme = "rule://"

var (
	// ErrNotRuleURL: the URL does not start with rule://.
	ErrNotRuleURL = errors.New("not a rule:// URL")
	// ErrMissingName: the URL is rule:// with no name.
	ErrMissingName = errors.New("rule:// URL has no rule name")
	// ErrUnknownRule is matched (errors.Is) by every *UnknownRuleError.
	ErrUnknownRule = errors.New("unknown rule")
)

// UnknownRuleError is returned for a rule:// name that no rulebook or
// always-apply rule has.
type UnknownRuleError struct {
	Name      string
	Available []string // sorted
}

func (e *UnknownRuleError) Error() string {
	if len(e.Available) == 0 {
		return fmt.Sprintf("unknown rule %q: no rules are available", e.Name)
	}
	return fmt.Sprintf("unknown rule %q; available rules: %s", e.Name, strings.Join(e.Available, ", "))
}

// Is makes errors.Is(err, ErrUnknownRule) true.
func (e *UnknownRuleError) Is(target error) bool { return target == ErrUnknownRule }

// Resolve resolves rule://NAME by exact name over the rulebook and always-apply
// rules. TTSR-only and unclassified rules are not reachable. The scheme is
// matched without regard to case; the name is taken verbatim.
func (b *Book) Resolve(url string) (Resource, error) {
	if len(url) < len(Scheme) || !strings.EqualFold(url[:len(Scheme)], Scheme) {
		return Resource{}, fmt.Errorf("%q: %w", url, ErrNotRuleURL)
	}
	name := url[len(Scheme):]
	if name == "" {
		return Resource{}, ErrMissingName
	}
	r, ok := b.byName[name]
	if !ok {
		return Resource{}, &UnknownRuleError{Name: name, Available: b.Available()}
	}
	class := ClassRulebook
	if r.AlwaysApply {
		class = ClassAlways
	}
	return Resource{URL: url, Name: r.Name, Content: r.Content, ContentType: "text/markdown", Path: r.Path, Class: class}, nil
}
