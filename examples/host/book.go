package main

import (
	"github.com/rulebroker/rulebroker/host-sdk/broker"
	"github.com/rulebroker/rulebroker/host-sdk/diag"
	"github.com/rulebroker/rulebroker/host-sdk/rulebook"
	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
	"github.com/rulebroker/rulebroker/shared"
)

// hostBook is the classified rule set with everything the host should show:
// the broker's warnings, then the rulebook's, and its notes on unreachable rules.
type hostBook struct {
	*rulebook.Book
	warnings []diag.Warning
	notes    []string
}

func newBook(res broker.Result) hostBook {
	b := rulebook.New(ruleset.Active(hostRules(res)))
	hb := hostBook{Book: b, warnings: append(hostWarnings(res.Warnings), b.Warnings()...)}
	for _, n := range b.Notes() {
		hb.notes = append(hb.notes, n.String())
	}
	return hb
}

// hostRules is the broker's merged list in the host SDK's rule type, which
// carries the provider's name beside the rule rather than in it.
func hostRules(res broker.Result) []ruleset.Rule {
	out := make([]ruleset.Rule, len(res.Rules))
	for i, r := range res.Rules {
		out[i] = ruleset.Rule{Rule: r.Rule, Provider: r.Provider, Shadowed: r.Shadowed, ShadowedBy: r.ShadowedBy}
	}
	return out
}

// hostWarnings is the broker's warnings in the host SDK's warning type.
func hostWarnings(ws []shared.Warning) []diag.Warning {
	out := make([]diag.Warning, len(ws))
	for i, w := range ws {
		out[i] = diag.Warning{Source: w.Provider, Path: w.Path, Message: w.Message}
	}
	return out
}

func (b hostBook) classOf(name string) string {
	c, _ := b.Class(name)
	return string(c)
}
