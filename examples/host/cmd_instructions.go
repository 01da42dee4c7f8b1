package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/rulebroker/rulebroker/host-sdk/diag"
	"github.com/rulebroker/rulebroker/host-sdk/instructions"
)

// newReconciler builds the instruction reconciler the flags describe.
func newReconciler(ctx context.Context, cfg *config) (*instructions.Reconciler, error) {
	fsys, err := hostFS(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return instructions.New(instructions.Config{
		FS:              fsys,
		Cwd:             cfg.cwd,
		DSHHome:         instructions.DefaultDSHHome(os.Getenv, cfg.home),
		Candidates:      cfg.candidates,
		LocalCandidates: cfg.locals,
		RootMarkers:     cfg.rootMarkers,
		Budget:          int64(cfg.budget),
	})
}

type instructionsJSON struct {
	Root     string                `json:"root"`
	Scopes   []instructions.Scope  `json:"scopes"`
	Changes  []instructions.Change `json:"changes"`
	Message  *instructions.Message `json:"message"`
	Warnings []string              `json:"warnings"`
}

func cmdInstructions(ctx context.Context, cfg *config, args []string, _ io.Reader, stdout io.Writer) error {
	if len(args) != 0 {
		return &exitError{code: 2, msg: "instructions takes no arguments"}
	}
	rec, err := newReconciler(ctx, cfg)
	if err != nil {
		return err
	}
	round, err := rec.Baseline(ctx)
	if err != nil {
		return err
	}
	doc := instructionsJSON{Root: rec.Root(), Scopes: rec.Loaded(), Changes: round.Changes, Message: round.Message, Warnings: nonNil(instructionWarnings(round.Warnings))}
	if doc.Changes == nil {
		doc.Changes = []instructions.Change{}
	}
	if cfg.json {
		return writeJSON(stdout, doc)
	}
	fmt.Fprintf(stdout, "WORKSPACE ROOT %s\n\nSCOPES (%d)\n", printable(doc.Root), len(doc.Scopes))
	t := newTable(stdout, "DIR", "CANDIDATE", "PATH", "RESOLVED", "DIGEST", "TRIMMED")
	for _, s := range doc.Scopes {
		t.row(s.Dir, s.Candidate, displayPath(cfg, s.Path), displayPath(cfg, s.ResolvedPath), short(s.Digest), short(s.TrimmedDigest))
	}
	t.flush()
	if doc.Message != nil {
		fmt.Fprintf(stdout, "\nMESSAGE (role %s)\n%s\n", doc.Message.Role, doc.Message.Text)
	}
	if len(doc.Warnings) > 0 {
		fmt.Fprintf(stdout, "\nWARNINGS (%d)\n", len(doc.Warnings))
		for _, w := range doc.Warnings {
			fmt.Fprintf(stdout, "  %s\n", printable(w))
		}
	}
	return nil
}

// instructionWarnings renders the reconciler's warnings as the host shows
// them: path and message, without the "instructions" source, which the
// output's structure already says.
func instructionWarnings(ws []diag.Warning) []string {
	var out []string
	for _, w := range ws {
		w.Source = ""
		out = append(out, w.String())
	}
	return out
}

// short abbreviates a "sha256:…" digest for a table.
func short(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}
