package instructions

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/rulebroker/rulebroker/host-sdk/reminder"
)

// MetadataType is the type of the metadata a Message carries.
const MetadataType = "context/message"

// Message is one round's rendering: a user-role message whose Text is wrapped
// in <system-reminder> … </system-reminder>.
type Message struct {
	Role     string   `json:"role"` // always "user"
	Text     string   `json:"text"`
	Metadata Metadata `json:"metadata"`
}

// Metadata is the structured form of a message's changes, so a host never
// has to parse the text.
//
// In JSON each change is listed in the message's own short form — action,
// scope (the key), path, digest, omitted — which is what hosts already read;
// the directory and candidate are recovered from the scope key.
type Metadata struct {
	Type    string   // MetadataType
	Round   string   // "baseline" or "update"
	Changes []Change // in render order, Omitted set on those cut
	// Budget is the byte budget in force (0 when unlimited).
	Budget int64
}

type metadataJSON struct {
	Type    string       `json:"type"`
	Round   string       `json:"round"`
	Changes []changeJSON `json:"changes"`
	Budget  int64        `json:"budget,omitempty"`
}

type changeJSON struct {
	Action  Action `json:"action"`
	Scope   string `json:"scope"`
	Path    string `json:"path"`
	Digest  string `json:"digest,omitempty"`
	Omitted bool   `json:"omitted,omitempty"`
}

// MarshalJSON writes the metadata with its changes in short form.
func (m Metadata) MarshalJSON() ([]byte, error) {
	j := metadataJSON{Type: m.Type, Round: m.Round, Budget: m.Budget}
	if m.Changes != nil {
		j.Changes = make([]changeJSON, len(m.Changes))
	}
	for i, c := range m.Changes {
		j.Changes[i] = changeJSON{Action: c.Action, Scope: c.Key, Path: c.Path, Digest: c.Digest, Omitted: c.Omitted}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes. A scope that is not a valid key
// leaves the change's directory and candidate empty rather than failing: the
// metadata is informational.
func (m *Metadata) UnmarshalJSON(data []byte) error {
	var j metadataJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*m = Metadata{Type: j.Type, Round: j.Round, Budget: j.Budget}
	if j.Changes != nil {
		m.Changes = make([]Change, len(j.Changes))
	}
	for i, c := range j.Changes {
		dir, cand, _ := ParseScopeKey(c.Scope)
		m.Changes[i] = Change{Action: c.Action, Key: c.Scope, Dir: dir, Candidate: cand, Path: c.Path, Digest: c.Digest, Omitted: c.Omitted}
	}
	return nil
}

// showPath renders a path for the text: escaped, and quoted when it holds a
// control character (a newline in a path must not forge a line of the
// message).
func showPath(p string) string {
	for _, c := range p {
		if c < 0x20 || c == 0x7f {
			return reminder.Escape(strconv.Quote(p))
		}
	}
	return reminder.Escape(p)
}

// render builds the round's message. Over the budget, the most specific
// files win: contents are admitted from the end of render order (deepest
// directory, last candidate) backwards while they fit, and every file cut is
// listed in a notice. Removes carry no bytes and are never cut.
func (r *Reconciler) render(first bool, pl plan, root string) Message {
	changes := append([]Change(nil), pl.changes...)
	sort.SliceStable(changes, func(i, j int) bool {
		return r.less(changes[i].Dir, changes[i].Candidate, changes[j].Dir, changes[j].Candidate)
	})
	omitted := map[string]bool{}
	if r.cfg.Budget > 0 {
		left := r.cfg.Budget
		for i := len(changes) - 1; i >= 0; i-- {
			c := changes[i]
			if c.Action == ActionRemove {
				continue
			}
			n := int64(len(pl.bytes[c.Key].data))
			if n <= left {
				left -= n
			} else {
				omitted[c.Key] = true
			}
		}
	}

	meta := Metadata{Type: MetadataType, Round: "update"}
	if first {
		meta.Round = "baseline"
	}
	if r.cfg.Budget > 0 {
		meta.Budget = r.cfg.Budget
	}
	var b strings.Builder // the body: every line ends in "\n"
	if first {
		b.WriteString("The following workspace instruction files may apply to your work. Each file applies to work in its directory and below; user-global instructions apply everywhere. Where they conflict, the more specific (deeper) file takes precedence.\n")
	} else {
		b.WriteString("The workspace instruction files changed.\n")
	}
	var cut []Change
	for _, c := range changes {
		c.Omitted = omitted[c.Key]
		meta.Changes = append(meta.Changes, c)
		if omitted[c.Key] {
			cut = append(cut, c)
			continue
		}
		b.WriteString("\n")
		switch {
		case c.Action == ActionRemove:
			fmt.Fprintf(&b, "The earlier instructions from %s no longer apply.\n", showPath(c.Path))
			continue
		case first:
			fmt.Fprintf(&b, "Instructions from %s:\n", showPath(c.Path))
		case c.Action == ActionSet && c.Dir == UserGlobalDir:
			fmt.Fprintf(&b, "New user-global instructions from %s now apply to all work:\n", showPath(c.Path))
		case c.Action == ActionSet:
			fmt.Fprintf(&b, "New instructions from %s now apply to work in %s:\n", showPath(c.Path), showPath(dirPath(root, r.cfg.DSHHome, c.Dir)))
		default:
			fmt.Fprintf(&b, "The instructions in %s changed; their new contents replace the earlier ones:\n", showPath(c.Path))
		}
		data := reminder.Escape(string(pl.bytes[c.Key].data))
		b.WriteString(data)
		if !strings.HasSuffix(data, "\n") {
			b.WriteString("\n")
		}
	}
	if len(cut) > 0 {
		fmt.Fprintf(&b, "\nNotice: %d instruction file(s) were not included because they would exceed the %d-byte instruction budget; more specific files were kept. Read them directly if they are relevant:\n", len(cut), r.cfg.Budget)
		for _, c := range cut {
			what := "new"
			if c.Action == ActionReplace {
				what = "changed"
			}
			fmt.Fprintf(&b, "- %s (%s, %d bytes)\n", showPath(c.Path), what, len(pl.bytes[c.Key].data))
		}
	}
	return Message{Role: "user", Text: reminder.Wrap(strings.TrimSuffix(b.String(), "\n")), Metadata: meta}
}
