package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/rulebroker/rulebroker/host-sdk/diag"
)

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// table writes aligned columns for people.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		// A tab or newline inside a cell would break the columns.
		cells[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(c)
		if cells[i] == "" {
			cells[i] = "-"
		}
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

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
		fmt.Fprintf(w, "  %s\n", diag.Warning{Source: x.Provider, Path: x.Path, Message: x.Message})
	}
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
