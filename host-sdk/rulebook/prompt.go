package rulebook

import (
	"strings"
	"unicode"

	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
)

// rulesIntro is the text between the "# Rules" heading and the <rules> block.
const rulesIntro = "Read rule://<name> when working in a rule's matching domain. " +
	"Each rule below is listed by name and description; its full content is only available by reading its rule:// URL. " +
	"Globs say which files a rule is about; they are a hint, not a filter."

// SystemPrompt renders the rules part of the system prompt.
//
// The exact format, with sections separated by one blank line and the whole
// ending in a single newline ("" when there is nothing to say):
//
//	<content of always-apply rule 1>
//
//	<content of always-apply rule 2>
//
//	# Rules
//
//	Read rule://<name> when working in a rule's matching domain. Each rule ...
//
//	<rules>
//	  <rule name="NAME">
//	    <description>DESCRIPTION</description>
//	    <glob>GLOB</glob>
//	  </rule>
//	</rules>
//
// Always-apply contents come first, in merge order, verbatim except that
// leading blank lines and trailing white space are dropped (an empty one is
// left out). The "# Rules" section is present only when there are rulebook
// rules; they are listed in merge order. A description has its white space
// runs collapsed to one space, so each rule's entry keeps its line shape;
// globs are trimmed, blank ones dropped, one <glob> line per glob, none when a
// rule has no globs. In native mode the attached rules follow in a section of
// their own (see attachedSection), and a requested rule is listed even
// without a description. Names, descriptions and globs are XML-escaped (& < > " ')
// so that rule text cannot close or forge a tag.
func (b *Book) SystemPrompt() string {
	var sections []string
	for _, r := range b.always {
		if c := trimContent(r.Content); c != "" {
			sections = append(sections, c)
		}
	}
	if len(b.rulebook) > 0 {
		var s strings.Builder
		s.WriteString("# Rules\n\n")
		s.WriteString(rulesIntro)
		s.WriteString("\n\n<rules>\n")
		for _, r := range b.rulebook {
			s.WriteString(`  <rule name="`)
			s.WriteString(escapeXML(r.Name))
			s.WriteString("\">\n    <description>")
			s.WriteString(escapeXML(strings.Join(strings.Fields(r.Description), " ")))
			s.WriteString("</description>\n")
			for _, g := range r.Globs {
				if g = strings.TrimSpace(g); g != "" {
					s.WriteString("    <glob>")
					s.WriteString(escapeXML(g))
					s.WriteString("</glob>\n")
				}
			}
			s.WriteString("  </rule>\n")
		}
		s.WriteString("</rules>")
		sections = append(sections, s.String())
	}
	if len(b.attached) > 0 {
		sections = append(sections, attachedSection(b.attached))
	}
	if len(sections) == 0 {
		return ""
	}
	return strings.Join(sections, "\n\n") + "\n"
}

// attachedIntro is the text between the "# Attached rules" heading and the
// <attached-rules> block.
const attachedIntro = "These rules are added to the conversation by themselves when a tool touches a file that one of their globs matches. " +
	"Read rule://<name> to see one sooner."

// attachedSection lists the attached rules (native mode) so the model knows
// they exist before a file brings one in:
//
//	# Attached rules
//
//	These rules are added to the conversation by themselves when ...
//
//	<attached-rules>
//	  <rule name="NAME">
//	    <glob>GLOB</glob>
//	    <description>DESCRIPTION</description>
//	  </rule>
//	</attached-rules>
//
// with the same escaping as the rulebook; a rule without a description has
// no <description> line.
func attachedSection(rules []ruleset.Rule) string {
	var s strings.Builder
	s.WriteString("# Attached rules\n\n")
	s.WriteString(attachedIntro)
	s.WriteString("\n\n<attached-rules>\n")
	for _, r := range rules {
		s.WriteString(`  <rule name="`)
		s.WriteString(escapeXML(r.Name))
		s.WriteString("\">\n")
		for _, g := range r.Globs {
			if g = strings.TrimSpace(g); g != "" {
				s.WriteString("    <glob>")
				s.WriteString(escapeXML(g))
				s.WriteString("</glob>\n")
			}
		}
		if d := strings.Join(strings.Fields(r.Description), " "); d != "" {
			s.WriteString("    <description>")
			s.WriteString(escapeXML(d))
			s.WriteString("</description>\n")
		}
		s.WriteString("  </rule>\n")
	}
	s.WriteString("</attached-rules>")
	return s.String()
}

// trimContent drops leading blank lines and trailing white space, keeping the
// first line's indentation (it may be an indented code block).
func trimContent(c string) string {
	c = strings.TrimRightFunc(c, unicode.IsSpace)
	for {
		i := strings.IndexByte(c, '\n')
		if i < 0 || strings.TrimSpace(c[:i]) != "" {
			return c
		}
		c = c[i+1:]
	}
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

func escapeXML(s string) string { return xmlEscaper.Replace(s) }
