package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/rulebroker/rulebroker/host-sdk/diag"
)

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// table writes aligned columns for people.
type table struct {
	tw *tabwriter.Writer
	// bw gathers what tabwriter writes: it writes each cell and each run of
	// padding separately, which unbuffered is two system calls per cell,
	// 200,000 for a table of 10,000 rules.
	bw *bufio.Writer
}

func newTable(w io.Writer, header ...string) *table {
	bw := bufio.NewWriterSize(w, 64<<10)
	t := &table{tw: tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0), bw: bw}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		cells[i] = printable(flatten(c))
		if cells[i] == "" {
			cells[i] = "-"
		}
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

// flatten turns tabs and newlines into spaces: inside a cell they would
// break the columns.
func flatten(s string) string {
	if !strings.ContainsAny(s, "\t\n") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' {
			return ' '
		}
		return r
	}, s)
}

func (t *table) flush() error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	return t.bw.Flush()
}

type warningJSON struct {
	Provider string `json:"provider,omitempty"`
	Path     string `json:"path,omitempty"`
	Message  string `json:"message"`
}

func warningsJSON(ws []diag.Warning) []warningJSON {
	out := make([]warningJSON, len(ws))
	for i, w := range ws {
		out[i] = warningJSON{Provider: w.Source, Path: w.Path, Message: w.Message}
	}
	return out
}

// printWarnings comes last in every human-readable output.
func printWarnings(w io.Writer, ws []warningJSON) {
	if len(ws) == 0 {
		return
	}
	fmt.Fprintf(w, "\nWARNINGS (%d)\n", len(ws))
	for _, x := range ws {
		fmt.Fprintf(w, "  %s\n", printable(diag.Warning{Source: x.Provider, Path: x.Path, Message: x.Message}.String()))
	}
}

// printable makes s safe to show on a terminal: control characters (C0, DEL,
// C1), format characters that print as nothing or reorder the line
// (zero-width, bidi controls, the BOM) and bytes that are not UTF-8 are
// written as Go escapes (\x1b, \u200b, \xff). A file name or description
// holding "\x1b[2K\r" could otherwise erase and rewrite the line it is on.
// Only the tables go through it; JSON output stays exact.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if needsEscape(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case needsEscape(r) && r < 0x100:
			fmt.Fprintf(&b, "\\x%02x", r)
		case needsEscape(r):
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(r rune) bool {
	return r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// displayPath shortens a path for a table: relative to cwd when below it,
// "~/…" when below home, else as is. JSON output keeps absolute paths.
func displayPath(cfg *config, p string) string {
	if rel, ok := below(cfg.cwd, p); ok {
		return rel
	}
	if rel, ok := below(cfg.home, p); ok && cfg.home != "" {
		return "~/" + rel
	}
	return p
}

func below(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}
