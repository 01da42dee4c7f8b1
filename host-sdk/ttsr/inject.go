package ttsr

import (
	"path/filepath"
	"regexp"
	"strings"
)

// closingReminder finds anything that could close (or open) the frame, in
// any letter case: a rule's text must not be able to end the reminder early
// and speak outside it.
var closingReminder = regexp.MustCompile(`(?i)<(/?\s*system-reminder)`)

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
// NAME and PATH are XML-escaped; in CONTENT, which is markdown and stays
// verbatim otherwise, a "<" that opens a system-reminder tag becomes "&lt;".
func InjectionMessage(m Match, cwd string) string {
	var b strings.Builder
	b.WriteString("<system-reminder>\n")
	b.WriteString("Your output was interrupted because it matched the rule \"")
	b.WriteString(escapeXML(m.Rule))
	b.WriteString("\" (")
	b.WriteString(escapeXML(relPath(m.Path, cwd)))
	b.WriteString(").\nFollow the rule below, then continue from where you were interrupted.\n\n")
	content := strings.Trim(m.Content, "\r\n")
	b.WriteString(closingReminder.ReplaceAllString(content, "&lt;$1"))
	b.WriteString("\n</system-reminder>")
	return b.String()
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
