package rulebook

import (
	"strings"

	"github.com/rulebroker/rulebroker/host-sdk/reminder"
	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
	"github.com/rulebroker/rulebroker/host-sdk/ttsr"
	"github.com/rulebroker/rulebroker/shared"
)

// Triggers returns the Set of stream triggers New compiled, for a running
// ttsr.Manager to switch to (Manager.Update) when the rules change.
func (b *Book) Triggers() *ttsr.Set { return b.triggers }

// visible returns the rules the model is told about, by name: always rules
// (their content is in the system prompt), requested rules (their name and
// description are) and attached rules (their name and globs are). It goes
// by activation, so a native-mode rule that is always through its tool's
// own setting (a Windsurf trigger, a Cline file) is announced as such.
func (b *Book) visible() map[string]*Entry {
	out := make(map[string]*Entry, len(b.entries))
	for i := range b.entries {
		e := &b.entries[i]
		switch e.Activation {
		case shared.ActivationAlways, shared.ActivationRequested, shared.ActivationAttached:
		default:
			continue
		}
		if _, dup := out[e.Rule.Name]; !dup {
			out[e.Rule.Name] = e
		}
	}
	return out
}

// ChangeMessage tells the model, in one <system-reminder>, how the rules it
// was given changed between two books: the content of each new or changed
// always rule, the name and description of each new or changed requested
// (rulebook) rule, the name and globs of each new or changed attached rule,
// and the name of each rule that no longer applies. Stream
// triggers and unreachable rules are not the model's business until they
// fire. It returns "" when the model has nothing to learn.
//
// The format:
//
//	<system-reminder>
//	The project's rules changed while you worked.
//
//	New rule "NAME" (PATH). It always applies:
//	CONTENT
//
//	Rule "NAME" (PATH) changed. It always applies and now reads:
//	CONTENT
//
//	New rule in the rulebook: "NAME": DESCRIPTION. Read rule://NAME when it is relevant.
//
//	Rule "NAME" changed; it is in the rulebook: DESCRIPTION. Read rule://NAME when it is relevant.
//
//	New rule "NAME" (PATH) applies to files matching GLOBS; its content comes with the first tool call that touches one.
//
//	Rule "NAME" (PATH) changed; it applies to files matching GLOBS and comes again with the next tool call that touches one.
//
//	Rule "NAME" no longer applies.
//	</system-reminder>
//
// Rules are listed in the new book's order, removed ones last in the old
// book's order. Names, paths and descriptions are XML-escaped; content is
// verbatim except that reminder.Escape keeps it inside the frame.
func ChangeMessage(old, new *Book) string {
	before, after := old.visible(), new.visible()
	var parts []string
	for _, e := range new.entries {
		if v, ok := after[e.Rule.Name]; !ok || v.Rule.Path != e.Rule.Path || v.Rule.Provider != e.Rule.Provider {
			continue // not visible, or a later duplicate
		}
		was, existed := before[e.Rule.Name]
		if existed && was.Activation == e.Activation && ruleset.SameRule(was.Rule, e.Rule) {
			continue
		}
		name, path := escapeXML(e.Rule.Name), escapeXML(e.Rule.Path)
		switch {
		case e.Activation == shared.ActivationAttached && !existed:
			parts = append(parts, `New rule "`+name+`" (`+path+") applies to files matching "+globList(e.Rule)+"; its content comes with the first tool call that touches one.")
		case e.Activation == shared.ActivationAttached:
			parts = append(parts, `Rule "`+name+`" (`+path+") changed; it applies to files matching "+globList(e.Rule)+" and comes again with the next tool call that touches one.")
		case e.Activation == shared.ActivationAlways && !existed:
			parts = append(parts, `New rule "`+name+`" (`+path+"). It always applies:\n"+reminder.Escape(trimContent(e.Rule.Content)))
		case e.Activation == shared.ActivationAlways:
			parts = append(parts, `Rule "`+name+`" (`+path+") changed. It always applies and now reads:\n"+reminder.Escape(trimContent(e.Rule.Content)))
		case !existed:
			parts = append(parts, `New rule in the rulebook: "`+name+`": `+describe(e.Rule)+" Read rule://"+name+" when it is relevant.")
		default:
			parts = append(parts, `Rule "`+name+`" changed; it is in the rulebook: `+describe(e.Rule)+" Read rule://"+name+" when it is relevant.")
		}
	}
	for _, e := range old.entries {
		if _, still := after[e.Rule.Name]; still {
			continue
		}
		if v, ok := before[e.Rule.Name]; ok && v.Rule.Path == e.Rule.Path && v.Rule.Provider == e.Rule.Provider {
			parts = append(parts, `Rule "`+escapeXML(e.Rule.Name)+`" no longer applies.`)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return reminder.Wrap("The project's rules changed while you worked.\n\n" + strings.Join(parts, "\n\n"))
}

func globList(r ruleset.Rule) string {
	return escapeXML(strings.Join(r.Globs, ", "))
}

func describe(r ruleset.Rule) string {
	d := escapeXML(strings.Join(strings.Fields(r.Description), " "))
	if !strings.HasSuffix(d, ".") {
		d += "."
	}
	return d
}
