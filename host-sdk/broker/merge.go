package broker

import (
	"sort"

	"github.com/rulebroker/rulebroker/shared"
)

// Rule is a discovered rule in merge order. A shadowed rule lost to an earlier
// rule of the same name and is kept only so the host can show it.
type Rule struct {
	shared.Rule
	Shadowed bool
	// ShadowedBy is the path of the rule that won the name, when Shadowed.
	ShadowedBy string
}

// providerRules is one provider's contribution to a merge.
type providerRules struct {
	Name     string
	Priority int
	Order    int // registration order: ties in priority keep it
	Rules    []shared.Rule
}

// merge orders providers by priority, descending, ties in registration order,
// and keeps the first rule of each name (spec/002 §4). Later rules with the
// same name stay in the list, marked shadowed.
func merge(sets []providerRules) []Rule {
	sorted := append([]providerRules(nil), sets...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Priority != sorted[j].Priority {
			return sorted[i].Priority > sorted[j].Priority
		}
		return sorted[i].Order < sorted[j].Order
	})
	var out []Rule
	winner := map[string]string{}
	for _, set := range sorted {
		for _, r := range set.Rules {
			r.Provider = set.Name
			if path, taken := winner[r.Name]; taken {
				out = append(out, Rule{Rule: r, Shadowed: true, ShadowedBy: path})
				continue
			}
			winner[r.Name] = r.Path
			out = append(out, Rule{Rule: r})
		}
	}
	return out
}
