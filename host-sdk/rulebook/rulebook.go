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
//
// Each rule also gets an Activation, how it reaches the model, and an
// ActivationSource saying what decided it. In reference mode (the default)
// the activation follows the class — always → always, rulebook → requested,
// ttsr → ttsr, none → none, with sources such as "reference: alwaysApply" —
// and the book behaves exactly as the reference pipeline. In native mode
// (WithActivation(shared.ModeNative)) the activation is the one the
// provider gave, as the rule's own tool applies it, except that a usable
// condition still makes a stream trigger and a rule with no content is none;
// from a provider that gives none it follows the class. Native mode then
// puts always rules in the prompt, lists requested rules (and attached ones
// with a description) in the # Rules section, lists attached rules in a
// section of their own (a host attaches them when a touched file matches,
// see package attach), notes why a rule is manual or none, and resolves
// rule:// for every rule with content.
package rulebook

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rulebroker/rulebroker/host-sdk/diag"
	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
	"github.com/rulebroker/rulebroker/host-sdk/ttsr"
	"github.com/rulebroker/rulebroker/shared"
)

// Class is a rule's class.
type Class string

const (
	ClassAlways   Class = "always"
	ClassRulebook Class = "rulebook"
	ClassTTSR     Class = "ttsr"
	ClassNone     Class = "none"
)

// Entry is one input rule with its class and activation.
type Entry struct {
	// Rule is the rule as given; for a TTSR rule, Rule.Condition still holds
	// every pattern, bad ones included (see Book.TTSR for the usable ones).
	Rule  ruleset.Rule
	Class Class
	// Activation is how the rule reaches the model in the book's mode, and
	// ActivationSource what decided it (see the package comment).
	Activation       shared.Activation
	ActivationSource string
}

// Book is a classified rule set. It is immutable after New and so safe for
// concurrent use.
type Book struct {
	mode     shared.ActivationMode
	entries  []Entry
	always   []ruleset.Rule
	rulebook []ruleset.Rule
	ttsr     []ruleset.Rule // Condition narrowed to the patterns that compile
	attached []ruleset.Rule
	manual   []ruleset.Rule
	none     []ruleset.Rule
	// triggers holds every condition compiled, once: NewTTSR builds its
	// managers from it.
	triggers *ttsr.Set
	warnings []diag.Warning
	notes    []diag.Warning
	// byName resolves rule://: in reference mode over rulebook then
	// always-apply rules, the order the spec's handler lists them; in native
	// mode over every rule with content, in merge order. The first rule with
	// a name wins.
	byName    map[string]resolved
	available []string
	// classes holds the class of the first rule of each name, so Class is a
	// map lookup: a host asks it once per rule, and a scan per call made
	// listing n rules cost n².
	classes map[string]Class
	// previous is the book this one replaces, set by WithPrevious and
	// dropped once New has reused its work.
	previous *Book
}

// resolved is a rule rule:// serves, with its entry's class and activation.
type resolved struct {
	rule       ruleset.Rule
	class      Class
	activation shared.Activation
}

// Option configures New.
type Option func(*Book)

// WithActivation sets the book's activation mode. shared.ModeReference (the
// default) is the reference pipeline exactly; shared.ModeNative applies each
// rule the way its tool does (see the package comment).
func WithActivation(mode shared.ActivationMode) Option {
	return func(b *Book) { b.mode = mode }
}

// WithPrevious names the book the new one replaces when a session's rules
// change: the conditions it compiled are not compiled again, so a change
// costs only what is new. The new book keeps no reference to it.
func WithPrevious(prev *Book) Option {
	return func(b *Book) { b.previous = prev }
}

// New classifies rules, which are the broker's rules that won their names,
// in merge order. Warnings name the provider each rule came from.
func New(rules []ruleset.Rule, opts ...Option) *Book {
	b := &Book{byName: map[string]resolved{}, mode: shared.ModeReference, classes: make(map[string]Class, len(rules))}
	for _, o := range opts {
		o(b)
	}
	native := b.mode == shared.ModeNative
	// The compile warnings are not used as such: classify reports each
	// rule's skipped patterns next to what became of the rule.
	if b.previous != nil && b.previous.triggers != nil {
		b.triggers, _ = b.previous.triggers.Recompile(rules)
	} else {
		b.triggers, _ = ttsr.Compile(rules)
	}
	b.previous = nil
	b.entries = make([]Entry, 0, len(rules))
	seen := make(map[string]bool, len(rules))
	var dups []ruleset.Rule
	for i, r := range rules {
		if seen[r.Name] {
			dups = append(dups, r)
		}
		seen[r.Name] = true
		compiled := b.triggers.Rule(i)
		e := Entry{Rule: r, Class: b.classify(r, compiled)}
		if native {
			e.Activation, e.ActivationSource = b.nativeActivation(r, e.Class)
		} else {
			e.Activation, e.ActivationSource = referenceActivation(e.Class)
		}
		b.entries = append(b.entries, e)
		b.file(e, compiled.Rule)
		if _, ok := b.classes[r.Name]; !ok {
			b.classes[r.Name] = e.Class
		}
	}
	if native {
		for _, e := range b.entries {
			if strings.TrimSpace(e.Rule.Content) != "" {
				b.index(e)
			}
		}
	} else {
		for _, e := range b.entries {
			if e.Class == ClassRulebook {
				b.index(e)
			}
		}
		for _, e := range b.entries {
			if e.Class == ClassAlways {
				b.index(e)
			}
		}
	}
	slices.Sort(b.available)
	// The broker removes shadowed rules, so a duplicate means a caller
	// bypassed it; say which copy rule:// serves (in reference mode rulebook
	// before always-apply, which need not be the first copy).
	for _, r := range dups {
		served := "none of them"
		if s, ok := b.byName[r.Name]; ok {
			served = "the one from " + s.rule.Path
		}
		b.warnings = append(b.warnings, warn(r, fmt.Sprintf("rule %q is defined again; rule:// serves %s", r.Name, served)))
	}
	return b
}

func (b *Book) index(e Entry) {
	if _, dup := b.byName[e.Rule.Name]; dup || e.Rule.Name == "" {
		return
	}
	b.byName[e.Rule.Name] = resolved{rule: e.Rule, class: e.Class, activation: e.Activation}
	b.available = append(b.available, e.Rule.Name)
}

// file puts e in the lists its activation calls for, and notes the rules
// nothing brings to the model. narrowed is the rule with only its usable
// conditions.
func (b *Book) file(e Entry, narrowed ruleset.Rule) {
	r := e.Rule
	switch e.Activation {
	case shared.ActivationTTSR:
		b.ttsr = append(b.ttsr, narrowed)
	case shared.ActivationAlways:
		b.always = append(b.always, r)
	case shared.ActivationRequested:
		b.rulebook = append(b.rulebook, r)
	case shared.ActivationAttached:
		b.attached = append(b.attached, r)
		// The model may also ask for it before a file attaches it, when
		// there is a description to judge it by.
		if strings.TrimSpace(r.Description) != "" {
			b.rulebook = append(b.rulebook, r)
		}
	case shared.ActivationManual:
		b.manual = append(b.manual, r)
		b.notes = append(b.notes, warn(r, fmt.Sprintf(
			"rule %q is manual: only an explicit rule://%s brings it in (%s)", r.Name, r.Name, e.ActivationSource)))
	default:
		b.none = append(b.none, r)
		why := e.ActivationSource
		if b.mode != shared.ModeNative {
			why = "it has no description, alwaysApply or condition"
			if len(r.Condition) > 0 {
				why = "none of its condition patterns compiles, and it has no description or alwaysApply"
			}
		}
		b.notes = append(b.notes, warn(r, fmt.Sprintf("rule %q is unreachable: %s", r.Name, why)))
	}
}

// classify returns r's class; compiled is what ttsr.Compile made of r's
// conditions.
func (b *Book) classify(r ruleset.Rule, compiled ttsr.Compiled) Class {
	if len(r.Condition) > 0 {
		b.warnings = append(b.warnings, compiled.Skipped...)
		if compiled.Usable() {
			return ClassTTSR
		}
		b.warnings = append(b.warnings, warn(r, fmt.Sprintf(
			"rule %q: no condition pattern compiles, so it is not a stream trigger; treating it as %s",
			r.Name, fallbackClass(r))))
	}
	return fallbackClass(r)
}

// referenceActivation is the activation a class gives in reference mode.
func referenceActivation(c Class) (shared.Activation, string) {
	switch c {
	case ClassTTSR:
		return shared.ActivationTTSR, "reference: condition"
	case ClassAlways:
		return shared.ActivationAlways, "reference: alwaysApply"
	case ClassRulebook:
		return shared.ActivationRequested, "reference: description"
	}
	return shared.ActivationNone, "reference: no description, alwaysApply or condition"
}

// nativeActivation is r's activation in native mode: a usable condition
// makes a stream trigger whatever the provider said (as the class does);
// otherwise the provider's activation, or, from a provider that gives none,
// the reference one. A rule with no content has nothing to give the model.
func (b *Book) nativeActivation(r ruleset.Rule, c Class) (shared.Activation, string) {
	act, src := referenceActivation(c)
	switch {
	case c == ClassTTSR:
		return shared.ActivationTTSR, "condition"
	case r.Activation == "":
	case validActivation(r.Activation):
		act, src = r.Activation, r.ActivationSource
		if src == "" {
			src = r.Provider
		}
	default:
		b.warnings = append(b.warnings, warn(r, fmt.Sprintf(
			"rule %q: unknown activation %q; using %s from its fields", r.Name, r.Activation, act)))
	}
	if strings.TrimSpace(r.Content) == "" && act != shared.ActivationNone {
		return shared.ActivationNone, "it has no content"
	}
	if act == shared.ActivationAttached && len(r.Globs) == 0 {
		return shared.ActivationManual, src + ", but no globs"
	}
	return act, src
}

func validActivation(a shared.Activation) bool {
	switch a {
	case shared.ActivationAlways, shared.ActivationAttached, shared.ActivationRequested,
		shared.ActivationManual, shared.ActivationTTSR, shared.ActivationNone:
		return true
	}
	return false
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

// Always returns the always-apply rules in merge order (in native mode, the
// rules whose activation is always).
func (b *Book) Always() []ruleset.Rule { return slices.Clone(b.always) }

// Rulebook returns the rules listed by description in the prompt, in merge
// order: the rulebook class in reference mode; requested rules and attached
// ones with a description in native mode.
func (b *Book) Rulebook() []ruleset.Rule { return slices.Clone(b.rulebook) }

// TTSR returns the TTSR rules in merge order, each with Condition narrowed to
// the patterns that compile.
func (b *Book) TTSR() []ruleset.Rule { return slices.Clone(b.ttsr) }

// Unclassified returns the rules nothing brings to the model (class none
// in reference mode, activation none in native mode), in merge order.
func (b *Book) Unclassified() []ruleset.Rule { return slices.Clone(b.none) }

// Attached returns the rules a touched file attaches (native mode), in merge
// order.
func (b *Book) Attached() []ruleset.Rule { return slices.Clone(b.attached) }

// Manual returns the rules only rule://NAME brings in (native mode), in merge
// order.
func (b *Book) Manual() []ruleset.Rule { return slices.Clone(b.manual) }

// Mode is the book's activation mode.
func (b *Book) Mode() shared.ActivationMode { return b.mode }

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
	// Class is ClassRulebook or ClassAlways in reference mode; in native
	// mode any rule with content is served, whatever its class.
	Class Class
	// Activation is the rule's activation in native mode; empty in
	// reference mode.
	Activation shared.Activation
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

// Resolve resolves rule://NAME by exact name. In reference mode it reaches
// the rulebook and always-apply rules only (TTSR-only and unclassified rules
// are not reachable); in native mode every rule with content, as a user's
// explicit mention of a rule would. The scheme is
// matched without regard to case; the name is taken verbatim.
func (b *Book) Resolve(url string) (Resource, error) {
	if len(url) < len(Scheme) || !strings.EqualFold(url[:len(Scheme)], Scheme) {
		return Resource{}, fmt.Errorf("%q: %w", url, ErrNotRuleURL)
	}
	name := url[len(Scheme):]
	if name == "" {
		return Resource{}, ErrMissingName
	}
	res, ok := b.byName[name]
	if !ok {
		return Resource{}, &UnknownRuleError{Name: name, Available: b.Available()}
	}
	r := res.rule
	out := Resource{URL: url, Name: r.Name, Content: r.Content, ContentType: "text/markdown", Path: r.Path}
	if b.mode == shared.ModeNative {
		out.Class, out.Activation = res.class, res.activation
		return out, nil
	}
	out.Class = ClassRulebook
	if r.AlwaysApply {
		out.Class = ClassAlways
	}
	return out, nil
}
