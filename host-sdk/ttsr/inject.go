package ttsr

import (
	"path/filepath"
	"strings"

	"github.com/rulebroker/rulebroker/host-sdk/reminder"
)

// InjectionMessage renders what a host injects after m fired: the rule's
// content, framed so the model knows its output was interrupted by that rule.
// The path is shown relative to cwd when it lies under cwd, else as is.
//
// The format is:
//
//	<system-reminder>
//	Your output was interrupted because it matched the rule "NAME" (PATH).
//	Follow the rule below, then continue from where you were interrupted.
//
//	CONTENT
//	</system-reminder>
//
// NAME and PATH are XML-escaped; CONTENT, which is markdown, stays verbatim
// except that reminder.Escape keeps it from closing the frame (a
// "</system-reminder" in any case becomes "<\/system-reminder").
func InjectionMessage(m Match, cwd string) string {
	var b strings.Builder
	b.WriteString("Your output was interrupted because it matched the rule \"")
	b.WriteString(escapeXML(m.Rule))
	b.WriteString("\" (")
	b.WriteString(escapeXML(relPath(m.Path, cwd)))
	b.WriteString(").\nFollow the rule below, then continue from where you were interrupted.\n\n")
	content := strings.Trim(m.Content, "\r\n")
	b.WriteString(reminder.Escape(content))
	return reminder.Wrap(b.String())
}

func relPath(path, cwd string) string {
	if cwd == "" || !filepath.IsAbs(path) {
		return path
	}
	rel, err := filepath.Rel(cwd, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return filepath.ToSlash(rel)
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

func escapeXML(s string) string { return xmlEscaper.Replace(s) }
