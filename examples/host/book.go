package main

import (
	"github.com/rulebroker/rulebroker/host-sdk/broker"
	"github.com/rulebroker/rulebroker/host-sdk/diag"
	"github.com/rulebroker/rulebroker/host-sdk/rulebook"
)

// hostBook is the classified rule set with everything the host should show:
// the broker's warnings, then the rulebook's, and its notes on unreachable rules.
type hostBook struct {
	*rulebook.Book
	warnings []diag.Warning
	notes    []string
}

func newBook(res broker.Result) hostBook {
	b := rulebook.New(res.Active())
	hb := hostBook{Book: b, warnings: append(append([]diag.Warning(nil), res.Warnings...), b.Warnings()...)}
	for _, n := range b.Notes() {
		hb.notes = append(hb.notes, n.String())
	}
	return hb
}

func (b hostBook) classOf(name string) string {
	c, _ := b.Class(name)
	return string(c)
}
