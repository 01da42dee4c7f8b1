package ruleset

import "slices"

// Diff is how one merged rule list differs from an earlier one. A rule is
// identified by its provider, name and file: the same name from another file
// or provider is another rule.
type Diff struct {
	// Added rules are in the new list only (shadowed on arrival or not).
	Added []Rule
	// Removed rules are in the old list only, as they were.
	Removed []Rule
	// Changed rules are in both with different content or metadata; each is
	// the new version.
	Changed []Rule
	// Shadowed rules won their name before and lose it now; Unshadowed ones
	// lost it before and win it now. Each is the new version.
	Shadowed   []Rule
	Unshadowed []Rule
}

// Empty reports whether nothing changed.
func (d Diff) Empty() bool {
	return len(d.Added)+len(d.Removed)+len(d.Changed)+len(d.Shadowed)+len(d.Unshadowed) == 0
}

type ruleKey struct{ provider, name, path string }

func keyOf(r Rule) ruleKey { return ruleKey{r.Provider, r.Name, r.Path} }

// DiffRules compares two merged rule lists (shadowed rules included). Each
// part keeps the order of the list it comes from.
func DiffRules(old, new []Rule) Diff {
	before := make(map[ruleKey]int, len(old)) // the first rule of each key in old
	for i, r := range old {
		if _, dup := before[keyOf(r)]; !dup {
			before[keyOf(r)] = i
		}
	}
	var d Diff
	seen := make(map[ruleKey]bool, len(new))
	for _, r := range new {
		k := keyOf(r)
		if seen[k] {
			continue
		}
		seen[k] = true
		i, ok := before[k]
		if !ok {
			d.Added = append(d.Added, r)
			continue
		}
		o := &old[i]
		if !SameRule(*o, r) {
			d.Changed = append(d.Changed, r)
		}
		switch {
		case !o.Shadowed && r.Shadowed:
			d.Shadowed = append(d.Shadowed, r)
		case o.Shadowed && !r.Shadowed:
			d.Unshadowed = append(d.Unshadowed, r)
		}
	}
	for _, r := range old {
		if k := keyOf(r); !seen[k] {
			seen[k] = true
			d.Removed = append(d.Removed, r)
		}
	}
	return d
}

// SameRule reports whether a and b carry the same rule: every field a
// provider sends, and the provider, ignoring which rule shadows it. It
// compares whole structs so a field added to the rule later counts too; an
// empty list and no list are the same.
func SameRule(a, b Rule) bool {
	x, y := a.Rule, b.Rule
	// Field by field: a live round compares every rule, and reflection
	// allocated for each. A test checks that no field is left out.
	return a.Provider == b.Provider && x.Name == y.Name && x.Path == y.Path && x.Content == y.Content &&
		slices.Equal(x.Globs, y.Globs) && x.AlwaysApply == y.AlwaysApply && x.Description == y.Description &&
		slices.Equal(x.Condition, y.Condition) && x.Level == y.Level && x.Activation == y.Activation &&
		x.ActivationSource == y.ActivationSource && x.GlobBase == y.GlobBase
}
