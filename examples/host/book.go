package main

import (
	"github.com/rulebroker/rulebroker/host-sdk/broker"
	"github.com/rulebroker/rulebroker/host-sdk/diag"
	"github.com/rulebroker/rulebroker/host-sdk/rulebook"
	"github.com/rulebroker/rulebroker/shared"
)

// hostBook is the classified rule set with everything the host should show:
// the broker's warnings, then the rulebook's, and its notes on unreachable rules.
type hostBook struct {
	*rulebook.Book
	warnings []diag.Warning
	notes    []string
	// byName is the entry of the first rule of each name: the tables look
	// up every rule, and a scan per rule made listing n rules cost n².
	byName map[string]rulebook.Entry
}

func newBook(cfg *config, res broker.Result) hostBook {
	b := rulebook.New(res.Active(), rulebook.WithActivation(cfg.activation))
	hb := hostBook{Book: b, warnings: append(append([]diag.Warning(nil), res.Warnings...), b.Warnings()...)}
	entries := b.Entries()
	hb.byName = make(map[string]rulebook.Entry, len(entries))
	for _, e := range entries {
		if _, ok := hb.byName[e.Rule.Name]; !ok {
			hb.byName[e.Rule.Name] = e
		}
	}
	for _, n := range b.Notes() {
		hb.notes = append(hb.notes, n.String())
	}
	return hb
}

func (b hostBook) classOf(name string) string {
	c, _ := b.Class(name)
	return string(c)
}

// activationOf is the activation and its source of the rule that won name,
// in native mode; both are empty in reference mode, whose output has no
// activation.
func (b hostBook) activationOf(name string) (string, string) {
	if b.Mode() != shared.ModeNative {
		return "", ""
	}
	if e, ok := b.byName[name]; ok {
		return string(e.Activation), e.ActivationSource
	}
	return "", ""
}
