// Package attach injects attached rules — rules whose activation is
// "attached" — when a tool touches a file their globs match, the way Cursor
// attaches an auto-attached rule and Windsurf a glob rule.
//
// It hangs on tools/post-execute like the instruction reconciler, registered
// after it, so the model reads the instructions first and then the rules
// attached by the same tool call. Each rule is injected once, as a
// <system-reminder> with its content (the instructions' frame and escape),
// and not again until its content changes or the session restarts.
//
// Globs are matched with github.com/bmatcuk/doublestar/v4 (`**`, `{a,b}`,
// classes). A project rule's globs are relative to its GlobBase (the
// directory holding its rules folder), a user rule's to the workspace root;
// a glob without "/" matches the base name at any depth, as Cursor does. A
// touched path outside the workspace root, or outside a rule's base, never
// matches.
package attach

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/rulebroker/rulebroker/host-sdk/diag"
	"github.com/rulebroker/rulebroker/host-sdk/lifecycle"
	"github.com/rulebroker/rulebroker/host-sdk/reminder"
	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
)

// Caps on one round: an agent's tool call touches a handful of files, and a
// bound keeps a runaway one (a tool that reports a whole tree) from costing
// more than a warning.
const (
	// MaxPaths is how many touched paths of one event are matched.
	MaxPaths = 10000
	// MaxMatched is how many matching paths an Attached lists per rule.
	MaxMatched = 20
)

// Config says where the session is.
type Config struct {
	// WorkspaceRoot is the absolute workspace root: user-level globs are
	// relative to it, and nothing outside it is ever matched.
	WorkspaceRoot string
	// Cwd is the session's absolute working directory; touched paths that
	// are relative are relative to it.
	Cwd string
}

// Attached is one rule a round injected.
type Attached struct {
	Name     string `json:"name"`
	Provider string `json:"provider"`
	Path     string `json:"path"`
	// Matched lists the touched paths its globs match (at most MaxMatched;
	// More counts the rest).
	Matched []string `json:"matched"`
	More    int      `json:"more,omitempty"`
}

// Round is the answer to one tools/post-execute event.
type Round struct {
	Attached []Attached
	// Message is the one message to inject for every rule attached, nil
	// when none was.
	Message  *lifecycle.Message
	Warnings []diag.Warning
}

// Outcome is what a host injects and shows.
func (r Round) Outcome() lifecycle.Outcome {
	o := lifecycle.Outcome{Warnings: r.Warnings}
	if r.Message != nil {
		o.Messages = []lifecycle.Message{*r.Message}
	}
	return o
}

// Attacher matches touched paths against the attached rules. It is safe for
// concurrent use; rounds are serialized.
type Attacher struct {
	cfg   Config
	mu    sync.Mutex
	rules []rule
	// sent holds, per rule, the digest of the content last injected.
	sent map[string][32]byte
	// pending are warnings from New or Update not yet reported by a round.
	pending []diag.Warning
}

type rule struct {
	ruleset.Rule
	base  string
	globs []string
	sum   [32]byte // of Content, taken once per Update rather than per touch
}

// New returns an Attacher over rules, the attached ones (in native mode,
// rulebook.Book.Attached()); shadowed rules are ignored. Globs that are not valid patterns are warnings, reported by
// the first round as well as returned.
func New(rules []ruleset.Rule, cfg Config) (*Attacher, []diag.Warning) {
	a := &Attacher{cfg: Config{WorkspaceRoot: filepath.Clean(cfg.WorkspaceRoot), Cwd: filepath.Clean(cfg.Cwd)},
		sent: map[string][32]byte{}}
	return a, a.Update(rules)
}

// Update replaces the rule set, as after the rules were loaded again. What
// was injected is remembered: a rule whose content is unchanged is not
// injected again, one whose content changed is, at the next matching touch.
func (a *Attacher) Update(rules []ruleset.Rule) []diag.Warning {
	var out []rule
	var warnings []diag.Warning
	for _, r := range rules {
		if r.Shadowed {
			continue
		}
		c := rule{Rule: r, base: a.cfg.WorkspaceRoot, sum: sha256.Sum256([]byte(r.Content))}
		if r.GlobBase != "" {
			c.base = filepath.Clean(r.GlobBase)
		}
		for _, g := range r.Globs {
			g = normalize(g)
			if g == "" {
				continue
			}
			if !doublestar.ValidatePattern(g) {
				warnings = append(warnings, diag.Warning{Source: r.Provider, Path: r.Path,
					Message: fmt.Sprintf("rule %q: glob %q is not a valid pattern; ignored", r.Name, g)})
				continue
			}
			c.globs = append(c.globs, g)
		}
		out = append(out, c)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rules = out
	a.pending = append(a.pending, warnings...)
	return warnings
}

// normalize trims a glob and drops a leading "./" or "/": both mean "from the
// base directory" in the rule files people write.
func normalize(g string) string {
	g = strings.TrimSpace(g)
	for {
		switch {
		case strings.HasPrefix(g, "./"):
			g = g[2:]
		case strings.HasPrefix(g, "/"):
			g = g[1:]
		default:
			return g
		}
	}
}

// Attach subscribes the attacher to lc's tools/post-execute. Register it after
// the instruction reconciler, so the model reads instructions first.
func (a *Attacher) Attach(lc lifecycle.Lifecycle) *lifecycle.Subscription[Round] {
	return lifecycle.Subscribe(lc, "attach", func(ctx context.Context, ev lifecycle.PostExecute) (Round, error) {
		return a.PostExecute(ctx, ev.Paths)
	})
}

// PostExecute matches the paths a tool touched and returns the rules to
// inject, in rule order, with one message for all of them.
func (a *Attacher) PostExecute(ctx context.Context, paths []string) (Round, error) {
	if err := ctx.Err(); err != nil {
		return Round{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	round := Round{Warnings: a.pending}
	a.pending = nil
	if len(paths) > MaxPaths {
		round.Warnings = append(round.Warnings, diag.Warning{Source: "attach", Message: fmt.Sprintf(
			"the tool touched %d paths; only the first %d (the cap) were matched against attached rules", len(paths), MaxPaths)})
		paths = paths[:MaxPaths]
	}
	touched := a.inWorkspace(paths)
	var text []string
	for _, r := range a.rules {
		var at Attached
		for _, p := range touched {
			if !r.matches(p) {
				continue
			}
			if len(at.Matched) < MaxMatched {
				at.Matched = append(at.Matched, p)
			} else {
				at.More++
			}
		}
		if at.Matched == nil {
			continue
		}
		key := r.Provider + "\x00" + r.Path + "\x00" + r.Name
		if last, ok := a.sent[key]; ok && last == r.sum {
			continue
		}
		a.sent[key] = r.sum
		at.Name, at.Provider, at.Path = r.Name, r.Provider, r.Path
		round.Attached = append(round.Attached, at)
		text = append(text, render(r.Rule, at))
	}
	if len(text) > 0 {
		body := "These rules apply to the files this tool call touched; follow them while working on those files.\n\n" +
			strings.Join(text, "\n\n")
		round.Message = &lifecycle.Message{Role: "user", Text: reminder.Wrap(body)}
	}
	return round, nil
}

// inWorkspace makes each touched path absolute (relative ones are relative
// to cwd) and keeps those inside the workspace root, each once.
func (a *Attacher) inWorkspace(paths []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(a.cfg.Cwd, p)
		}
		p = filepath.Clean(p)
		if _, ok := below(a.cfg.WorkspaceRoot, p); ok && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// below returns p relative to dir, slash-separated, when p is inside dir.
func below(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// matches reports whether one of r's globs matches the absolute path p.
func (r rule) matches(p string) bool {
	rel, ok := below(r.base, p)
	if !ok {
		return false
	}
	for _, g := range r.globs {
		subject := rel
		if !strings.Contains(g, "/") {
			subject = path.Base(rel)
		}
		if ok, _ := doublestar.Match(g, subject); ok {
			return true
		}
	}
	return false
}

// render is one rule's part of the message: which files it was attached for,
// then its content, each escaped so no file name or rule can close the frame.
func render(r ruleset.Rule, at Attached) string {
	files := strings.Join(at.Matched, ", ")
	if at.More > 0 {
		files += fmt.Sprintf(" and %d more", at.More)
	}
	return reminder.Escape(fmt.Sprintf("Rule %q (%s) applies to %s:\n\n%s", r.Name, r.Path, files, r.Content))
}
