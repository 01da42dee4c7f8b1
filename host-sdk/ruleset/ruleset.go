// Package ruleset is the host's view of discovered rules: each rule with the
// provider it came from and whether it won its name in the merge. It carries
// the fields only the host knows, so the wire's rule type stays what a
// provider sends.
package ruleset

import "github.com/rulebroker/rulebroker/shared"

// Rule is a discovered rule as the host sees it. A shadowed rule lost its name
// to an earlier rule in merge order and is kept only so the host can show it.
type Rule struct {
	shared.Rule
	// Provider is the name of the provider that sent the rule.
	Provider string
	Shadowed bool
	// ShadowedBy is the path of the rule that won the name, when Shadowed.
	ShadowedBy string
}

// Active returns the rules that won their names, in the order given.
func Active(rules []Rule) []Rule {
	out := make([]Rule, 0, len(rules))
	for _, r := range rules {
		if !r.Shadowed {
			out = append(out, r)
		}
	}
	return out
}
