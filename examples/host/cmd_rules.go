package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rulebroker/rulebroker/host-sdk/broker"
	"github.com/rulebroker/rulebroker/shared"
)

type ruleJSON struct {
	Name        string   `json:"name"`
	Provider    string   `json:"provider"`
	Level       string   `json:"level"`
	Path        string   `json:"path"`
	Description string   `json:"description"`
	Globs       []string `json:"globs"`
	AlwaysApply bool     `json:"alwaysApply"`
	Condition   []string `json:"condition"`
	Class       string   `json:"class"`
	// Activation, its source and the glob base are in native mode only, so
	// reference mode prints exactly what the reference pipeline's host did.
	Activation       string `json:"activation,omitempty"`
	ActivationSource string `json:"activationSource,omitempty"`
	GlobBase         string `json:"globBase,omitempty"`
	Shadowed         bool   `json:"shadowed"`
	ShadowedBy       string `json:"shadowedBy,omitempty"`
}

type providerJSON struct {
	Name            string `json:"name"`
	Priority        int    `json:"priority"`
	DefaultPriority int    `json:"defaultPriority"`
	Version         string `json:"version"`
	Origin          string `json:"origin"`
	// Status is builtin, verified, unverified or refused.
	Status  string `json:"status"`
	SHA256  string `json:"sha256,omitempty"`
	Sandbox string `json:"sandbox,omitempty"`
	PID     int    `json:"pid"`
	Rules   int    `json:"rules"`
	Partial string `json:"partial,omitempty"`
	Error   string `json:"error,omitempty"`
}

func providerRows(ps []broker.Provider) []providerJSON {
	out := []providerJSON{}
	for _, p := range ps {
		pj := providerJSON{Name: p.Name, Priority: p.Priority, DefaultPriority: p.DefaultPriority,
			Version: p.Version, Origin: p.Origin, Status: p.Status, SHA256: p.SHA256, Sandbox: p.Sandbox,
			PID: p.PID, Rules: p.Rules, Partial: p.Partial}
		if p.Err != nil {
			pj.Error = p.Err.Error()
		}
		out = append(out, pj)
	}
	return out
}

type rulesJSON struct {
	Rules     []ruleJSON     `json:"rules"`
	Providers []providerJSON `json:"providers"`
	Warnings  []warningJSON  `json:"warnings"`
	Notes     []string       `json:"notes"`
}

func cmdRules(ctx context.Context, cfg *config, args []string, _ io.Reader, stdout io.Writer) error {
	if len(args) != 0 {
		return &exitError{code: 2, msg: "rules takes no arguments"}
	}
	if cfg.watch {
		return watchRules(ctx, cfg, stdout)
	}
	res, err := loadRules(ctx, cfg)
	if err != nil {
		return err
	}
	doc := rulesDoc(cfg, res)
	if cfg.json {
		return writeJSON(stdout, doc)
	}
	printRules(stdout, cfg, doc)
	return nil
}

// rulesDoc is what rules prints of res.
func rulesDoc(cfg *config, res broker.Result) rulesJSON {
	book := newBook(cfg, res)
	doc := rulesJSON{Rules: []ruleJSON{}, Providers: []providerJSON{}, Notes: nonNil(book.notes)}
	native := cfg.activation == shared.ModeNative
	for _, r := range res.Rules {
		class, activation, source := "", "", ""
		if !r.Shadowed {
			class = book.classOf(r.Name)
			activation, source = book.activationOf(r.Name)
		}
		rj := ruleJSON{
			Name: r.Name, Provider: r.Provider, Level: string(r.Level), Path: r.Path,
			Description: r.Description, Globs: nonNil(r.Globs), AlwaysApply: r.AlwaysApply,
			Condition: nonNil(r.Condition), Class: class, Shadowed: r.Shadowed, ShadowedBy: r.ShadowedBy,
			Activation: activation, ActivationSource: source,
		}
		if native {
			rj.GlobBase = r.GlobBase
		}
		doc.Rules = append(doc.Rules, rj)
	}
	doc.Providers = providerRows(res.Providers)
	doc.Warnings = warningsJSON(book.warnings)
	return doc
}

// watchRules keeps the providers running (a live broker), prints the rules,
// and prints them again whenever a check finds that they, or the provider
// processes, changed — the checks a session makes after each tool call, here
// every --interval. With --json each print is one JSON document on one line.
// It ends on SIGINT or SIGTERM.
func watchRules(ctx context.Context, cfg *config, stdout io.Writer) error {
	live, _, rootWarnings, err := startLive(ctx, cfg)
	if err != nil {
		return err
	}
	defer live.Close()
	show := func(what string) error {
		res := live.Result()
		res.Warnings = append(res.Warnings, rootWarnings...)
		doc := rulesDoc(cfg, res)
		if cfg.json {
			enc := json.NewEncoder(stdout)
			enc.SetEscapeHTML(false)
			return enc.Encode(doc)
		}
		if what != "" {
			fmt.Fprintf(stdout, "\n=== %s: %s\n\n", time.Now().Format("15:04:05"), what)
		}
		printRules(stdout, cfg, doc)
		return nil
	}
	if err := show(""); err != nil {
		return err
	}
	tick := time.NewTicker(cfg.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return errInterrupted
		case <-tick.C:
		}
		ch, err := live.Refresh(ctx, nil)
		if ctx.Err() != nil {
			return errInterrupted
		}
		if err != nil {
			return err
		}
		if ch.Rules.Empty() && len(ch.Restarted) == 0 && len(ch.Warnings) == 0 {
			continue
		}
		if err := show(changeSummary(ch)); err != nil {
			return err
		}
	}
}

// changeSummary says in a few words what a round changed.
func changeSummary(ch broker.Change) string {
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{
		{len(ch.Rules.Added), "added"}, {len(ch.Rules.Removed), "removed"}, {len(ch.Rules.Changed), "changed"},
		{len(ch.Rules.Shadowed), "newly shadowed"}, {len(ch.Rules.Unshadowed), "no longer shadowed"},
		{len(ch.Restarted), "providers restarted"}, {len(ch.Warnings), "new warnings"},
	} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	return "rules changed: " + strings.Join(parts, ", ")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func printRules(w io.Writer, cfg *config, doc rulesJSON) {
	fmt.Fprintf(w, "RULES (%d, in merge order)\n", len(doc.Rules))
	native := cfg.activation == shared.ModeNative
	header := []string{"NAME", "CLASS", "PROVIDER", "LEVEL", "ALWAYS", "GLOBS", "CONDITION", "DESCRIPTION", "PATH"}
	if native {
		// The table of reference mode stays exactly the reference host's.
		header = slices.Insert(header, 2, "ACTIVATION")
	}
	t := newTable(w, header...)
	for _, r := range doc.Rules {
		class := r.Class
		if r.Shadowed {
			class = "shadowed"
		}
		always := ""
		if r.AlwaysApply {
			always = "yes"
		}
		cells := []string{r.Name, class, r.Provider, r.Level, always, strings.Join(r.Globs, " "),
			strings.Join(r.Condition, " | "), clip(r.Description, 48), displayPath(cfg, r.Path)}
		if native {
			cells = slices.Insert(cells, 2, r.Activation)
		}
		t.row(cells...)
	}
	t.flush()

	fmt.Fprintf(w, "\nPROVIDERS (%d)\n", len(doc.Providers))
	t = newTable(w, "NAME", "PRIORITY", "VERSION", "PID", "RULES", "ORIGIN", "STATUS", "TRUST", "SANDBOX")
	for _, p := range doc.Providers {
		prio := strconv.Itoa(p.Priority)
		if p.Priority != p.DefaultPriority {
			prio = fmt.Sprintf("%d (default %d)", p.Priority, p.DefaultPriority)
		}
		status := "ok"
		switch {
		case p.Error != "":
			status, prio = "failed", ""
		case p.Partial != "":
			status = "partial" // the warnings say why
		}
		if p.Status == broker.StatusRefused {
			status = "not started"
		}
		t.row(p.Name, prio, p.Version, strconv.Itoa(p.PID), strconv.Itoa(p.Rules), p.Origin, status, p.Status, p.Sandbox)
	}
	t.flush()

	if len(doc.Notes) > 0 {
		fmt.Fprintf(w, "\nNOTES (%d)\n", len(doc.Notes))
		for _, n := range doc.Notes {
			fmt.Fprintf(w, "  %s\n", printable(n))
		}
	}
	printWarnings(w, doc.Warnings)
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
