package broker

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/rulebroker/rulebroker/host-sdk/diag"
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
//
// Names are compared, and handed on, trimmed and in Unicode NFC: two names
// that look the same to a person and to the model (one typed with a
// trailing space, one saved in NFD by a Mac) are one name, and the later one
// is shadowed. A name that still holds characters nobody can see (zero-width
// and bidi format characters, C0/C1 controls) gets a warning naming the file.
//
// The merge is one pass with a map: linear in the number of rules.
func merge(sets []providerRules) ([]ruleset.Rule, []diag.Warning) {
	sorted := append([]providerRules(nil), sets...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Priority != sorted[j].Priority {
			return sorted[i].Priority > sorted[j].Priority
		}
		return sorted[i].Order < sorted[j].Order
	})
	n := 0
	for _, set := range sorted {
		n += len(set.Rules)
	}
	out := make([]ruleset.Rule, 0, n)
	var warnings []diag.Warning
	winner := make(map[string]string, n)
	for _, set := range sorted {
		for _, r := range set.Rules {
			r.Name = canonicalName(r.Name)
			if bad := invisibleRunes(r.Name); bad != "" {
				warnings = append(warnings, diag.Warning{Source: set.Name, Path: r.Path, Message: fmt.Sprintf(
					"rule name %+q contains invisible or control characters (%s); it will look like another name to people and to the model",
					r.Name, bad)})
			}
			if path, taken := winner[r.Name]; taken {
				out = append(out, ruleset.Rule{Rule: r, Provider: set.Name, Shadowed: true, ShadowedBy: path})
				continue
			}
			winner[r.Name] = r.Path
			out = append(out, ruleset.Rule{Rule: r, Provider: set.Name})
		}
	}
	return out, warnings
}

// canonicalName is the form names are compared in: white space trimmed,
// then NFC.
func canonicalName(name string) string {
	name = strings.TrimSpace(name)
	if printableASCII(name) || norm.NFC.IsNormalString(name) {
		return name
	}
	return norm.NFC.String(name)
}

// printableASCII reports a name of printable ASCII only, which is in NFC
// and holds no invisible character.
func printableASCII(name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] < 0x20 || name[i] > 0x7e {
			return false
		}
	}
	return true
}

// invisibleRunes lists, as U+XXXX, the characters of name that print as
// nothing or move the text around: format characters (zero-width space and
// joiners, bidi embeddings and isolates, the BOM, the soft hyphen) and C0/C1
// controls. It returns "" for a clean name.
func invisibleRunes(name string) string {
	if printableASCII(name) {
		return "" // the usual name, checked without a table lookup per rune
	}
	var bad []string
	for _, r := range name {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			bad = append(bad, fmt.Sprintf("U+%04X", r))
		}
	}
	return strings.Join(bad, ", ")
}
