package broker

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rulebroker/rulebroker/host-sdk/diag"
	"github.com/rulebroker/rulebroker/host-sdk/lifecycle"
	"github.com/rulebroker/rulebroker/host-sdk/rulebook"
	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
	"github.com/rulebroker/rulebroker/host-sdk/ttsr"
	"github.com/rulebroker/rulebroker/host-sdk/workfs"
	"github.com/rulebroker/rulebroker/internal/wire"
	"github.com/rulebroker/rulebroker/shared"
)

// Restart backoff: a provider that died, or that failed to start or to
// describe itself, is started again on the first round at least this long
// after the failure, the delay doubling with each failure in a row up to the
// cap.
const (
	firstBackoff = time.Second
	maxBackoff   = time.Minute
	// degradedAfter failures in a row mark a provider degraded.
	degradedAfter = 3
	// maxExtraDirs and maxExtraBytes cap the touched directories sent to
	// providers: their count, and their bytes, which must leave the
	// Discover request well under the plugin's request limit.
	maxExtraDirs  = 10_000
	maxExtraBytes = 1 << 20
)

// LiveOption configures Start.
type LiveOption func(*liveConfig)

type liveConfig struct {
	now  func() time.Time
	ttsr []ttsr.Option
}

// WithClock sets the clock for restart backoff and for the racy-timestamp
// guard (it must tell the time on the same scale as the filesystem's
// mtimes); time.Now by default.
func WithClock(now func() time.Time) LiveOption { return func(c *liveConfig) { c.now = now } }

// WithTTSR configures the session's stream-trigger manager (Live.TTSR).
func WithTTSR(opts ...ttsr.Option) LiveOption { return func(c *liveConfig) { c.ttsr = opts } }

// Live is a broker that keeps its providers running for a session and keeps
// their rules current as the workspace changes: after each tool call it
// re-checks, without asking the providers, the stat facts of every path each
// provider read, stat'ed or listed, and runs Discover again only on the
// providers whose inputs changed. A provider that dies keeps its last rules
// and is restarted with backoff.
//
// Rounds (Refresh, or the hook Attach registers) are serialized; Result,
// Book and TTSR are safe to call at any time.
type Live struct {
	opts  Options
	cfg   liveConfig
	req   shared.DiscoverRequest
	found []diag.Warning // from finding the providers; every Result has them

	round    sync.Mutex // held for a whole round, and by Close
	provs    []*liveProvider
	extra    map[string]bool
	closed   bool
	capNoted bool
	// extraBytes is the length of the paths in extra.
	extraBytes int

	// rounds counts the rounds, from 1: a fact checked unchanged is marked
	// with the round that checked it.
	rounds uint64

	mu        sync.RWMutex // guards what readers see
	result    Result
	book      *rulebook.Book
	triggers  *ttsr.Manager
	discovers int
}

// liveProvider is one provider of a Live session.
type liveProvider struct {
	launch launch
	proc   *started // nil while the process is down
	// good is the provider's last successful discovery; last is its latest
	// attempt. They differ while a failed provider keeps its last rules.
	good, last *outcome
	facts      *factSet
	// calls are the HostFS calls of its latest discovery, answered ahead of
	// the next one (see prefetch).
	calls []shared.Prefetched
	// Failure bookkeeping: failures (crashes and failed starts) in a row,
	// crashes in all, when the process was started, and when it may be
	// started again.
	streak    int
	crashes   int
	startedAt time.Time
	nextStart time.Time
	// warned says the current failure episode — from a failure until the
	// provider runs again — has had its one warning.
	warned bool
}

// Change is what one round changed.
type Change struct {
	// Rules is how the merged rule list changed.
	Rules ruleset.Diff
	// Message is the one <system-reminder> to inject ("" when the model has
	// nothing to learn): see rulebook.ChangeMessage.
	Message string
	// Discovered names the providers that ran Discover this round;
	// Restarted those whose process was started again, or started at last
	// after failing to start.
	Discovered []string
	Restarted  []string
	// Warnings are this round's new warnings: crashes, and what a provider
	// that ran again reported that it had not before.
	Warnings []diag.Warning
}

// Outcome is what a host injects and shows after the round.
func (c Change) Outcome() lifecycle.Outcome {
	out := lifecycle.Outcome{Warnings: c.Warnings}
	if c.Message != "" {
		out.Messages = []lifecycle.Message{{Role: "user", Text: c.Message}}
	}
	return out
}

// Start starts every provider in parallel, runs Discover once on each, and
// keeps them running; Close stops them. It fails only when the options are
// unusable; every provider problem is a warning in the result.
func Start(ctx context.Context, opts Options, req shared.DiscoverRequest, options ...LiveOption) (*Live, error) {
	opts, req, err := prepare(opts, req)
	if err != nil {
		return nil, err
	}
	l := &Live{opts: opts, req: req, extra: map[string]bool{}}
	l.cfg.now = time.Now
	for _, o := range options {
		o(&l.cfg)
	}
	launches, found := findLaunches(opts)
	l.found = found
	for _, ln := range launches {
		l.provs = append(l.provs, &liveProvider{launch: ln})
	}
	l.runAll(ctx, l.provs, nil)
	if ctx.Err() != nil {
		l.Close()
		return nil, ctx.Err()
	}
	res := l.assemble()
	book := rulebook.New(res.Active(), rulebook.WithActivation(l.req.Activation))
	l.result, l.book, l.triggers = res, book, book.NewTTSR(l.cfg.ttsr...)
	return l, nil
}

// runAll brings each of provs up to date in parallel: starting it when it
// is down, then discovering. Crash warnings go to warns.
func (l *Live) runAll(ctx context.Context, provs []*liveProvider, warns *[]diag.Warning) {
	if len(provs) == 1 {
		// The usual round after an edit: one provider, and no goroutine to
		// hand it to and wait for.
		if w := l.run(ctx, provs[0]); warns != nil {
			*warns = append(*warns, w...)
		}
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, p := range provs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := l.run(ctx, p)
			if warns != nil && len(w) > 0 {
				mu.Lock()
				*warns = append(*warns, w...)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// run starts p if it is down, then runs Discover on it. A failure keeps
// p's last good rules; one that leaves the process dead or stuck stops it
// and schedules a restart.
func (l *Live) run(ctx context.Context, p *liveProvider) []diag.Warning {
	ctx, cancel := context.WithTimeout(ctx, l.opts.Timeout)
	defer cancel()
	out := &outcome{}
	// The provider still has its previous discovery's answers when it runs
	// in the same process, that discovery succeeded, and it said it keeps
	// them: the answers this round's check found unchanged are sent as
	// "unchanged".
	var same func(shared.Prefetched) *fact
	if facts := p.facts; p.proc != nil && p.proc.unchangedAnswers && facts != nil && p.good != nil && p.last == p.good {
		round := l.rounds
		same = func(c shared.Prefetched) *fact { return facts.unchanged(c, round) }
	}
	if p.proc == nil {
		p.proc = p.launch.start(ctx, l.opts, out)
		if p.proc == nil {
			p.last = out
			return l.startFailed(p)
		}
		p.startedAt = l.cfg.now()
		p.warned = false
	} else {
		out.provider = p.last.provider
		out.provider.Err = nil
	}
	rec := newFactRecorder(l.opts.FS, l.cfg.now)
	fsys := newRecordingFS(l.opts.FS)
	fsys.facts = rec
	fsys.expect(len(p.calls))
	l.mu.Lock()
	l.discovers++
	l.mu.Unlock()
	req := l.request()
	req.Prefetch = prefetch(ctx, fsys, p.calls, same)
	p.proc.discover(ctx, l.opts, req, fsys, out)
	p.last = out
	p.calls = fsys.calls()
	if err := out.provider.Err; err != nil {
		if p.good == nil {
			p.facts = nil
		}
		if errors.Is(err, wire.ErrCrashed) || errors.Is(err, wire.ErrTimeout) || p.proc.client.Exited() {
			return []diag.Warning{l.crashed(p, "failed: "+err.Error())}
		}
		if ctx.Err() != nil || errors.Is(err, wire.ErrCanceled) {
			// The host cut the call short: what it recorded is a partial
			// read, so it runs again next round rather than trusting it.
			p.facts = nil
			return nil
		}
		// The provider answered with an error: its inputs are recorded, so
		// it runs again when they change; until then its last rules stay.
		p.facts = rec.done()
		if p.good == nil {
			return nil
		}
		return []diag.Warning{{Source: out.provider.Name, Message: "discovery failed; the provider's last rules stay loaded: " + err.Error()}}
	}
	var fresh []diag.Warning
	if p.good != nil {
		fresh = newWarnings(p.good.warnings, out.warnings)
	}
	facts := rec.done()
	if facts.overflow {
		fresh = append(fresh, diag.Warning{Source: out.provider.Name, Message: fmt.Sprintf(
			"the provider asked about more than %d paths; it runs again after every tool call", maxFacts)})
	}
	p.good, p.facts = out, facts
	return fresh
}

// crashed stops p's process, counts the crash, schedules the restart and
// returns the one warning the crash gets.
func (l *Live) crashed(p *liveProvider, what string) diag.Warning {
	if p.proc != nil {
		p.proc.client.Kill()
		p.proc = nil
		if l.cfg.now().Sub(p.startedAt) >= maxBackoff {
			p.streak = 0 // it had been running fine for a while
		}
	}
	p.crashes++
	delay := l.backoff(p)
	p.warned = true
	msg := fmt.Sprintf("provider %s; its last rules stay loaded; restarting in %s (crash %d)", what, delay, p.crashes)
	if p.streak >= degradedAfter {
		msg += "; degraded: it keeps crashing"
	}
	return diag.Warning{Source: p.name(), Message: msg}
}

// backoff counts a failure in a row and schedules the next start.
func (l *Live) backoff(p *liveProvider) time.Duration {
	p.streak++
	delay := min(firstBackoff<<min(p.streak-1, 10), maxBackoff)
	p.nextStart = l.cfg.now().Add(delay)
	return delay
}

// startFailed schedules another start of p, which failed to start or to
// describe itself, with the crash backoff. It returns no warning, because
// the failure episode already has its one: a provider that never ran is
// reported by the result as skipped, its error saying when it is tried
// again, and one whose restart after a crash failed had the crash's
// warning. The providers table shows the rest (Degraded).
func (l *Live) startFailed(p *liveProvider) []diag.Warning {
	delay := l.backoff(p)
	what := fmt.Sprintf("trying again in %s (failure %d in a row)", delay, p.streak)
	if p.streak >= degradedAfter {
		what += "; degraded: it keeps failing"
	}
	p.last.provider.Err = fmt.Errorf("%w; %s", p.last.provider.Err, what)
	p.warned = true
	return nil
}

// name is the provider's name, as it described itself when it did.
func (p *liveProvider) name() string {
	for _, o := range []*outcome{p.good, p.last} {
		if o != nil && o.provider.Name != "" {
			return o.provider.Name
		}
	}
	return p.launch.name
}

// newWarnings returns the warnings in now that were not in before.
func newWarnings(before, now []diag.Warning) []diag.Warning {
	seen := make(map[diag.Warning]bool, len(before))
	for _, w := range before {
		seen[w] = true
	}
	var out []diag.Warning
	for _, w := range now {
		if !seen[w] {
			out = append(out, w)
		}
	}
	return out
}

// request is the Discover request with the touched directories so far.
func (l *Live) request() shared.DiscoverRequest {
	req := l.req
	req.ExtraDirs = nil
	for d := range l.extra {
		req.ExtraDirs = append(req.ExtraDirs, d)
	}
	slices.Sort(req.ExtraDirs)
	return req
}

// assemble merges every provider's last good rules.
func (l *Live) assemble() Result {
	launches := make([]launch, len(l.provs))
	outcomes := make([]outcome, len(l.provs))
	for i, p := range l.provs {
		launches[i] = p.launch
		o := p.last
		if p.good != nil {
			o = p.good
		}
		if o == nil {
			o = &outcome{provider: Provider{Name: p.launch.name, Origin: p.launch.origin, Status: p.launch.status}}
		}
		outcomes[i] = *o
		row := &outcomes[i].provider
		row.PID = 0
		if p.proc != nil {
			row.PID = p.proc.client.PID
		}
		row.Crashes = p.crashes
		row.Degraded = p.streak >= degradedAfter
	}
	res := Result{Warnings: slices.Clone(l.found)}
	assemble(l.opts, launches, outcomes, &res)
	return res
}

// addExtra adds the directories between cwd (exclusive) and the folder of
// each touched path below cwd, and returns how many were new.
func (l *Live) addExtra(touched []string) (added int, warns []diag.Warning) {
	cwd := filepath.Clean(l.req.Cwd)
	for _, p := range touched {
		if workfs.Implausible(p) {
			continue // no real file has it, so no provider has rules below it
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		rel, err := filepath.Rel(cwd, filepath.Dir(filepath.Clean(p)))
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		dir := cwd
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			dir = filepath.Join(dir, part)
			if l.extra[dir] {
				continue
			}
			if len(l.extra) >= maxExtraDirs || l.extraBytes+len(dir) > maxExtraBytes {
				if !l.capNoted {
					l.capNoted = true
					warns = append(warns, diag.Warning{Message: fmt.Sprintf(
						"more than %d touched directories (or %d bytes of their paths); providers are not asked about the rest (%s and later)",
						maxExtraDirs, maxExtraBytes, dir)})
				}
				break
			}
			l.extra[dir] = true
			l.extraBytes += len(dir)
			added++
		}
	}
	return added, warns
}

// Refresh is one round after a tool call: touched are the paths the tool
// touched (absolute or relative to cwd). It re-checks every provider's
// recorded inputs, runs Discover on the providers whose inputs changed (all
// of them when a touched path reaches a new directory below cwd), restarts
// providers that died once their backoff has passed, and returns what
// changed. The rulebook and the TTSR manager are updated in place.
func (l *Live) Refresh(ctx context.Context, touched []string) (Change, error) {
	l.round.Lock()
	defer l.round.Unlock()
	if l.closed {
		return Change{}, errors.New("broker: the live broker is closed")
	}
	var ch Change
	l.rounds++
	added, warns := l.addExtra(touched)
	ch.Warnings = warns
	now := l.cfg.now()
	var todo []*liveProvider
	down := map[*liveProvider]bool{}
	crashedNow, recovered := false, false // the providers table changes
	for _, p := range l.provs {
		if p.proc != nil && p.proc.client.Exited() {
			ch.Warnings = append(ch.Warnings, l.crashed(p, fmt.Sprintf("process (pid %d) exited", p.proc.client.PID)))
			crashedNow = true
			continue
		}
		if p.proc != nil && p.streak > 0 && now.Sub(p.startedAt) >= maxBackoff {
			p.streak = 0 // running fine for a while ends the row of failures
			recovered = true
		}
		switch {
		case p.proc == nil:
			if !now.Before(p.nextStart) {
				todo = append(todo, p)
				down[p] = true
			}
		case p.facts == nil:
			todo = append(todo, p)
		default:
			// A provider that keeps its answers has every fact checked,
			// even when a new touched directory sends every provider to
			// discover again: what is found unchanged need not be read
			// again (see prefetch). For another, the first change will do.
			round := l.rounds
			if !p.proc.unchangedAnswers {
				round = 0
			}
			if _, changed := p.facts.changed(ctx, l.opts.FS, now, round); changed || added > 0 {
				todo = append(todo, p)
			}
		}
	}
	if len(todo) == 0 && !crashedNow && !recovered {
		return ch, ctx.Err()
	}
	var runWarns []diag.Warning
	l.runAll(ctx, todo, &runWarns)
	ch.Warnings = append(ch.Warnings, runWarns...)
	for _, p := range todo {
		if down[p] && p.proc != nil {
			ch.Restarted = append(ch.Restarted, p.name())
		}
		if p.last != nil && p.last.provider.Err == nil {
			ch.Discovered = append(ch.Discovered, p.last.provider.Name)
		}
	}

	res := l.assemble()
	l.mu.Lock()
	defer l.mu.Unlock()
	ch.Rules = ruleset.DiffRules(l.result.Rules, res.Rules)
	l.result = res
	if !ch.Rules.Empty() {
		book := rulebook.New(res.Active(), rulebook.WithActivation(l.req.Activation), rulebook.WithPrevious(l.book))
		ch.Message = rulebook.ChangeMessage(l.book, book)
		l.book = book
		l.triggers.Update(book.Triggers())
	}
	return ch, ctx.Err()
}

// Attach registers the live broker on lc's tools/post-execute under the
// name "rules". Register it after the instruction reconciler and glob
// attachment, so the model reads rule changes last.
func (l *Live) Attach(lc lifecycle.Lifecycle) *lifecycle.Subscription[Change] {
	return lifecycle.Subscribe(lc, "rules", func(ctx context.Context, ev lifecycle.PostExecute) (Change, error) {
		return l.Refresh(ctx, ev.Paths)
	})
}

// Result is the current merged result: each provider's last good rules.
func (l *Live) Result() Result {
	l.mu.RLock()
	defer l.mu.RUnlock()
	r := l.result
	r.Rules = slices.Clone(r.Rules)
	r.Providers = slices.Clone(r.Providers)
	r.Warnings = slices.Clone(r.Warnings)
	return r
}

// Rules is the current merged rule list, shadowed rules included.
func (l *Live) Rules() []ruleset.Rule { return l.Result().Rules }

// Book is the current rulebook; a new one replaces it when the rules change.
func (l *Live) Book() *rulebook.Book {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.book
}

// TTSR is the session's stream-trigger manager. It stays the same object
// for the whole session: each change of rules updates it in place, keeping
// which rules already fired.
func (l *Live) TTSR() *ttsr.Manager { return l.triggers }

// Discovers counts the Discover calls made so far, the first round's
// included.
func (l *Live) Discovers() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.discovers
}

// Close stops every provider process and waits for them to exit (go-plugin
// kills one that does not stop within two seconds). It is safe to call more
// than once.
func (l *Live) Close() {
	l.round.Lock()
	defer l.round.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	var wg sync.WaitGroup
	for _, p := range l.provs {
		if p.proc == nil {
			continue
		}
		wg.Add(1)
		go func(s *started) {
			defer wg.Done()
			s.client.Kill()
		}(p.proc)
		p.proc = nil
	}
	wg.Wait()
	for _, p := range l.provs {
		if p.launch.file != nil {
			p.launch.file.Close()
		}
	}
}
