package broker

import (
	"sort"

	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
	"github.com/rulebroker/rulebroker/shared"
)

// providerRules is one provider's contribution to a merge.
type providerRules struct {
	Name     string
	Priority int
	Order    int // registration order: ties in priority keep it
	Rules    []shared.Rule
}

// merge orders providers by priority, descending, ties in registration order,
// and keeps the first rule of each name. Later rules with the
// same name stay in the list, marked shadowed. Each rule names its provider.
func merge(sets []providerRules) []ruleset.Rule {
	sorted := append([]providerRules(nil), sets...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Priority != sorted[j].Priority {
			return sorted[i].Priority > sorted[j].Priority
		}
		return sorted[i].Order < sorted[j].Order
	})
	var out []ruleset.Rule
	winner := map[string]string{}
	for _, set := range sorted {
		for _, r := range set.Rules {
			if path, taken := winner[r.Name]; taken {
				out = append(out, ruleset.Rule{Rule: r, Provider: set.Name, Shadowed: true, ShadowedBy: path})
				continue
			}
			winner[r.Name] = r.Path
			out = append(out, ruleset.Rule{Rule: r, Provider: set.Name})
		}
	}
	return out
}
