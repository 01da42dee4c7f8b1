// Package broker finds rule provider plugins, starts each as its own process,
// serves them the host's filesystem, collects what they discover, and merges
// it by priority, the first rule of each name winning. A provider that fails costs only its own
// rules: the failure comes back as a warning naming the binary.
package broker

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rulebroker/rulebroker/host-sdk/diag"
	"github.com/rulebroker/rulebroker/host-sdk/ruleset"
	"github.com/rulebroker/rulebroker/internal/wire"
	"github.com/rulebroker/rulebroker/shared"
)

// DefaultTimeout bounds each provider's start, Describe and Discover together.
const DefaultTimeout = 5 * time.Second

// Options configure a Load.
type Options struct {
	// Builtins are the providers the host links, in registration order. The
	// conventional order is native, cursor, windsurf, cline.
	Builtins []Builtin
	// DevPluginDirs are searched first for rulebroker-provider-* binaries:
	// directories a developer named explicitly (e.g. --plugin-dir). Their
	// binaries run without the lock file, marked StatusUnverified.
	DevPluginDirs []string
	// PluginDirs are then searched for third-party binaries that run only
	// if LockFile lists their checksum; see PluginDirs for the conventional
	// list.
	PluginDirs []string
	// LockFile lists the trusted binaries (see package trust);
	// conventionally trust.DefaultLockFile(home). Empty: no binary from
	// PluginDirs is trusted.
	LockFile string
	// TrustHint returns the command that trusts the binary at path, for the
	// warning about an untrusted one; nil says to add it to LockFile.
	TrustHint func(path string) string
	// Env is the allow-list of host environment variables a provider gets
	// ("NAME" or "PREFIX*"); sandbox.DefaultEnv() when nil.
	Env []string
	// Unconfined starts providers without Landlock; they still get only the
	// allow-listed environment.
	Unconfined bool
	// ReadExec are paths providers may read and execute besides their own
	// binary and sandbox.SystemReadExec().
	ReadExec []string
	// FS is the filesystem served to providers. Required.
	FS shared.HostFS
	// Timeout per provider; DefaultTimeout when zero.
	Timeout time.Duration
	// Priority overrides a provider's own priority, by provider name.
	Priority map[string]int
	// Logger receives go-plugin's and the providers' logs; silent when nil.
	Logger hclog.Logger
	// Activation is the mode every provider is asked to read rules in
	// (shared.ModeNative or shared.ModeReference); when set it overrides the
	// request's, and empty leaves the request as it is. A live broker's
	// rulebook is built in the same mode.
	Activation shared.ActivationMode

	// Caps on what one provider may cost the host. Zero means the default.
	// A provider that reaches one keeps the rules it delivered within the
	// caps, its stream is cancelled, and one warning names the cap.

	// MaxRuleBytes caps one rule (its content, description, name, path,
	// globs and conditions together) and one file read through HostFS;
	// DefaultMaxRuleBytes (shared.DefaultMaxRuleBytes). It is sent to the
	// providers (DiscoverRequest.MaxRuleBytes) as the cap on what they read,
	// and it sets gRPC's receive limit: it plus wire metadata room.
	MaxRuleBytes int64
	// MaxRulesPerProvider caps the rules one provider delivers;
	// DefaultMaxRulesPerProvider.
	MaxRulesPerProvider int
	// MaxProviderBytes caps the bytes of rules and warnings one provider
	// delivers; DefaultMaxProviderBytes.
	MaxProviderBytes int64
	// HostFSCallBudget caps the file bytes one HostFS ReadFiles call
	// returns; the files past it are answered with an error and read again
	// by the SDK in a later call. DefaultHostFSCallBudget; never less than
	// MaxRuleBytes.
	HostFSCallBudget int64
	// HostFSInFlight caps the file bytes all providers' HostFS calls hold at
	// once; a read waits (within the provider's deadline) for room.
	// DefaultHostFSInFlight; never less than MaxRuleBytes.
	HostFSInFlight int64
	// AllowBuiltinNames lets a third-party provider use the name of one of
	// Builtins. By default it is refused: with a higher priority it would
	// shadow the built-in's rules under the built-in's name.
	AllowBuiltinNames bool

	// inFlight is the HostFSInFlight allowance every provider of one Load
	// (or one live broker) shares; withDefaults makes it.
	inFlight *wire.Bytes
}

// The default caps (see Options).
const (
	DefaultMaxRuleBytes        = shared.DefaultMaxRuleBytes
	DefaultMaxRulesPerProvider = 100_000
	DefaultMaxProviderBytes    = 64 << 20
	DefaultHostFSCallBudget    = 16 << 20
	DefaultHostFSInFlight      = 32 << 20
)

// withDefaults fills in every zero cap and makes the HostFS budgets large
// enough for one file of the per-rule cap, so every read can succeed.
func (o Options) withDefaults(req shared.DiscoverRequest) Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.MaxRuleBytes <= 0 {
		o.MaxRuleBytes = req.MaxRuleBytes
	}
	if o.MaxRuleBytes <= 0 {
		o.MaxRuleBytes = DefaultMaxRuleBytes
	}
	if o.MaxRulesPerProvider <= 0 {
		o.MaxRulesPerProvider = DefaultMaxRulesPerProvider
	}
	if o.MaxProviderBytes <= 0 {
		o.MaxProviderBytes = DefaultMaxProviderBytes
	}
	if o.HostFSCallBudget <= 0 {
		o.HostFSCallBudget = DefaultHostFSCallBudget
	}
	if o.HostFSInFlight <= 0 {
		o.HostFSInFlight = DefaultHostFSInFlight
	}
	o.HostFSCallBudget = max(o.HostFSCallBudget, o.MaxRuleBytes)
	o.HostFSInFlight = max(o.HostFSInFlight, o.MaxRuleBytes)
	if o.inFlight == nil {
		o.inFlight = wire.NewBytes(o.HostFSInFlight)
	}
	return o
}

// Provider describes one provider of a Load, whether it worked or not.
type Provider struct {
	Name            string // from Describe; the built-in's name or binary name if it failed first
	Version         string
	Priority        int    // after any override
	DefaultPriority int    // what the provider asked for
	Origin          string // "builtin" or the binary's path
	// Status is StatusBuiltin, StatusVerified, StatusUnverified or
	// StatusRefused (not started; Err says why).
	Status string
	// SHA256 of the binary's bytes as executed; empty for built-ins.
	SHA256 string
	// Sandbox is how the process was confined: "landlock vN" or
	// "none: <why>"; empty when it was not started.
	Sandbox string
	PID     int
	Rules   int      // rules it contributed, shadowed included
	Reads   []string // every path it asked the host about
	Refused []string // the paths among them the host's policy refused
	// Partial says why the provider's rules may be incomplete although it
	// did not fail: the cap it reached (its stream was cut there), or a
	// HostFS call that failed in transport. Empty when complete.
	Partial string
	Err     error // why it contributed nothing, if it failed
	// Crashes counts the times a live broker's provider process died or got
	// stuck; Degraded says it keeps doing so (it is still restarted, with
	// backoff, and its last rules stay loaded).
	Crashes  int
	Degraded bool
}

// Result is what a Load found.
type Result struct {
	// Rules in merge order, shadowed ones included and marked, each naming
	// its provider.
	Rules []ruleset.Rule
	// Providers in registration order.
	Providers []Provider
	// Warnings from the providers and about them; Source names the provider,
	// or its binary when it failed before it could name itself.
	Warnings []diag.Warning
}

// Active returns the rules that won their names, in merge order.
func (r Result) Active() []ruleset.Rule { return ruleset.Active(r.Rules) }

// prepare checks the options Load and Start share, fills in their defaults,
// and puts into the request what the options decide for every provider.
func prepare(opts Options, req shared.DiscoverRequest) (Options, shared.DiscoverRequest, error) {
	if opts.FS == nil {
		return opts, req, errors.New("broker: Options.FS is required")
	}
	opts = opts.withDefaults(req)
	req.MaxRuleBytes = opts.MaxRuleBytes
	if opts.Activation != "" {
		req.Activation = opts.Activation
	}
	return opts, req, nil
}

// Load starts every provider in parallel, runs Discover once on each, stops
// them all, and merges the results. It fails only when the options are
// unusable; every provider problem is a warning in the result.
func Load(ctx context.Context, opts Options, req shared.DiscoverRequest) (Result, error) {
	opts, req, err := prepare(opts, req)
	if err != nil {
		return Result{}, err
	}

	var res Result
	launches, warnings := findLaunches(opts)
	defer closeLaunches(launches)
	res.Warnings = warnings

	outcomes := make([]outcome, len(launches))
	var wg sync.WaitGroup
	for i, l := range launches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outcomes[i] = l.run(ctx, opts, req)
		}()
	}
	wg.Wait()

	assemble(opts, launches, outcomes, &res)
	return res, nil
}

// refusedWarning sums up, in one warning, what the host's filesystem policy
// kept from the providers: expected when a host confines reads, but a user
// whose rules live outside the allowed roots needs to learn why they are
// missing. Provider.Refused has the detail.
func refusedWarning(providers []Provider) (diag.Warning, bool) {
	seen := map[string]bool{}
	var paths []string
	for _, p := range providers {
		for _, r := range p.Refused {
			if !seen[r] {
				seen[r] = true
				paths = append(paths, r)
			}
		}
	}
	if len(paths) == 0 {
		return diag.Warning{}, false
	}
	const show = 3
	list := strings.Join(paths[:min(show, len(paths))], ", ")
	if len(paths) > show {
		list += fmt.Sprintf(", and %d more", len(paths)-show)
	}
	return diag.Warning{Message: fmt.Sprintf(
		"the host's filesystem policy kept %d path(s) from the providers, so no rules were loaded from them: %s", len(paths), list)}, true
}

type outcome struct {
	provider Provider
	rules    []shared.Rule
	warnings []diag.Warning
}

// run starts the provider, asks it to describe itself and discover, and stops
// it. Whatever happens, the process is gone when run returns.
func (l launch) run(ctx context.Context, opts Options, req shared.DiscoverRequest) (out outcome) {
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	s := l.start(ctx, opts, &out)
	if s == nil {
		return out
	}
	defer s.client.Kill()
	s.discover(ctx, opts, req, newRecordingFS(opts.FS), &out)
	return out
}

// started is a provider process that has described itself.
type started struct {
	client     *wire.Client
	stderr     *stderrTail
	fsFailures *firstError // its HostFS calls that failed in transport
	// unchangedAnswers: the provider takes a prefetched answer marked
	// unchanged as the one it got last time (it said so in Describe).
	unchangedAnswers bool
}

// fail records why the provider contributes nothing, with the last line it
// wrote to stderr when there is one.
func (out *outcome) fail(stderr *stderrTail, err error) {
	if last := stderr.last(); last != "" {
		err = fmt.Errorf("%w; its stderr ended with: %s", err, last)
	}
	out.provider.Err = err
	out.rules = nil
}

// start starts the provider and asks it to describe itself, filling in
// out.provider. On failure it returns nil, out.provider.Err says why, and
// no process is left behind.
func (l launch) start(ctx context.Context, opts Options, out *outcome) *started {
	out.provider = Provider{Name: l.name, Origin: l.origin, Status: l.status, SHA256: l.sha256}
	stderr := &stderrTail{}
	if l.refused != nil {
		out.fail(stderr, l.refused)
		return nil
	}
	out.provider.Sandbox = l.sandbox.desc
	fsFailures := &firstError{}
	client, err := wire.Start(ctx, wire.Config{
		Command: func(socketDir string) (*exec.Cmd, error) {
			return l.command(opts, socketDir)
		},
		StartTimeout: opts.Timeout,
		Logger:       opts.Logger.Named(l.name),
		Stderr:       stderr,
		MaxRuleBytes: opts.MaxRuleBytes,
		HostFS: wire.HostFSLimits{
			MaxReadBytes: opts.MaxRuleBytes,
			CallBudget:   opts.HostFSCallBudget,
			InFlight:     opts.inFlight,
		},
		HostFSFailed: fsFailures.note,
	})
	if err != nil {
		out.fail(stderr, explain("start", err, opts.Timeout))
		return nil
	}
	out.provider.PID = client.PID

	info, err := client.Provider.Describe(ctx)
	switch {
	case err != nil:
		err = explain("describe", err, opts.Timeout)
	case info.Name == "":
		err = errors.New("describe: the provider has no name")
	default:
		if cerr := info.Check(); cerr != nil {
			err = fmt.Errorf("describe: refused: %w", cerr)
		}
	}
	if err != nil {
		client.Kill()
		out.fail(stderr, err)
		return nil
	}
	out.provider.Name = info.Name
	out.provider.Version = info.Version
	out.provider.Priority = info.Priority
	out.provider.DefaultPriority = info.Priority
	return &started{client: client, stderr: stderr, fsFailures: fsFailures,
		unchangedAnswers: slices.Contains(info.Capabilities, shared.CapabilityUnchangedAnswers)}
}

// discover runs Discover on a started provider through fsys, filling in
// out's rules, warnings and reads. The process keeps running.
func (s *started) discover(ctx context.Context, opts Options, req shared.DiscoverRequest, fsys *recordingFS, out *outcome) {
	name := out.provider.Name
	sink := &collect{provider: name, maxRules: opts.MaxRulesPerProvider, maxBytes: opts.MaxProviderBytes, maxRuleBytes: opts.MaxRuleBytes}
	s.fsFailures.take() // only this call's failures count
	err := s.client.Provider.Discover(ctx, req, fsys, sink)
	out.provider.Reads, out.provider.Refused = fsys.read()
	out.warnings = append(fsys.warnings(name), sink.warnings...)
	out.provider.Partial = ""
	var capped *capError
	switch {
	case errors.As(err, &capped):
		// The sink refused the item over the cap; returning its error
		// cancelled the stream. What came before stays.
	case errors.Is(err, wire.ErrTooLarge):
		// gRPC refused a message over the receive limit unread: the
		// per-rule cap, as far as the host can tell.
		capped = &capError{cap: fmt.Sprintf("bytes per rule (%d, plus %d for metadata)", opts.MaxRuleBytes, wire.MetadataBytes),
			what: "it sent a message over it"}
	case err != nil:
		out.fail(s.stderr, explain("discover", err, opts.Timeout))
		return
	}
	if capped != nil {
		out.provider.Partial = "over the cap on " + capped.cap
		out.warnings = append(out.warnings, diag.Warning{Source: name, Path: capped.path, Message: fmt.Sprintf(
			"provider over the cap on %s: %s; its stream was cut there and the %d rule(s) it delivered before are kept",
			capped.cap, capped.what, len(sink.rules))})
	}
	if first, n := s.fsFailures.take(); n > 0 {
		if out.provider.Partial == "" {
			out.provider.Partial = "a read of the host's files failed"
		}
		out.warnings = append(out.warnings, diag.Warning{Source: name, Message: fmt.Sprintf(
			"%d call(s) to the host's filesystem failed in transport, so its rules may be incomplete; the first: %v", n, first)})
	}
	out.provider.Err = nil
	out.rules = sink.rules
	out.provider.Rules = len(sink.rules)
}

// firstError counts errors and keeps the first.
type firstError struct {
	mu    sync.Mutex
	first error
	n     int
}

func (f *firstError) note(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		f.first = err
	}
	f.n++
}

// take returns what was noted since the last take, and forgets it.
func (f *firstError) take() (error, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	first, n := f.first, f.n
	f.first, f.n = nil, 0
	return first, n
}

// collect gathers a provider's stream, checking each item against the caps.
type collect struct {
	provider     string
	maxRules     int
	maxBytes     int64
	maxRuleBytes int64
	bytes        int64
	rules        []shared.Rule
	warnings     []diag.Warning
}

// capError is the sink's refusal of an item over a cap. Returned from the
// sink, it ends the stream (the wire cancels the call).
type capError struct {
	cap  string // which cap, with its value
	what string // what went over it
	path string // the file concerned, if any
}

func (e *capError) Error() string { return "over the cap on " + e.cap + ": " + e.what }

// itemOverhead is what the host counts for each item beyond its strings, so
// a flood of empty items is bounded by the byte cap too.
const itemOverhead = 64

func ruleBytes(r shared.Rule) int64 {
	n := len(r.Name) + len(r.Path) + len(r.Content) + len(r.Description) + len(r.ActivationSource) + len(r.GlobBase) + len(r.Activation) + len(r.Level)
	for _, g := range r.Globs {
		n += len(g)
	}
	for _, c := range r.Condition {
		n += len(c)
	}
	return int64(n)
}

func (c *collect) Rule(r shared.Rule) error {
	if r.Name == "" {
		return c.Warning(shared.Warning{Path: r.Path, Message: "rule has no name; ignored"})
	}
	size := ruleBytes(r)
	switch {
	case size > c.maxRuleBytes+wire.MetadataBytes:
		// The same room gRPC's receive limit gives: a file of exactly the
		// cap still has a path and a name.
		return &capError{cap: fmt.Sprintf("bytes per rule (%d, plus %d for metadata)", c.maxRuleBytes, wire.MetadataBytes), path: r.Path,
			what: fmt.Sprintf("rule %q is %d bytes", r.Name, size)}
	case len(c.rules) >= c.maxRules:
		return &capError{cap: fmt.Sprintf("rules per provider (%d)", c.maxRules), what: "it sent more rules"}
	case c.bytes+size+itemOverhead > c.maxBytes:
		return &capError{cap: fmt.Sprintf("bytes per provider (%d)", c.maxBytes), path: r.Path,
			what: fmt.Sprintf("rule %q would bring it to %d bytes", r.Name, c.bytes+size+itemOverhead)}
	}
	c.bytes += size + itemOverhead
	c.rules = append(c.rules, r)
	return nil
}

func (c *collect) Warning(w shared.Warning) error {
	size := int64(len(w.Path)+len(w.Message)) + itemOverhead
	if c.bytes+size > c.maxBytes {
		return &capError{cap: fmt.Sprintf("bytes per provider (%d)", c.maxBytes),
			what: fmt.Sprintf("its warnings and rules would come to %d bytes", c.bytes+size)}
	}
	c.bytes += size
	c.warnings = append(c.warnings, diag.Warning{Source: c.provider, Path: w.Path, Message: w.Message})
	return nil
}

// assemble merges the providers' outcomes into res, in registration order,
// with a warning for each provider that failed.
func assemble(opts Options, launches []launch, outcomes []outcome, res *Result) {
	builtinNames := map[string]bool{}
	for _, b := range opts.Builtins {
		builtinNames[b.Name] = true
	}
	sets := make([]providerRules, 0, len(outcomes))
	res.Providers = slices.Grow(res.Providers, len(outcomes))
	firstOrigin := map[string]string{} // provider name → origin of the first provider with it
	for i, o := range outcomes {
		p := o.provider
		if p.Err == nil && p.Origin != "builtin" && builtinNames[p.Name] && !opts.AllowBuiltinNames {
			p.Err = fmt.Errorf("describe: it calls itself %q, the name of a built-in provider; refused, so it cannot shadow the built-in's rules (a host can allow it)", p.Name)
			o.rules = nil
			p.Rules = 0
		}
		if p.Err == nil {
			if first, dup := firstOrigin[p.Name]; dup {
				// Both run and merge; the earlier registration wins every tie,
				// which is rarely what someone installing a second copy wants.
				res.Warnings = append(res.Warnings, diag.Warning{Source: p.Origin, Message: fmt.Sprintf(
					"provider name %q is also used by %s; both ran, and a --priority override applies to both", p.Name, first)})
			} else {
				firstOrigin[p.Name] = p.Origin
			}
		}
		if override, ok := opts.Priority[p.Name]; ok && p.Err == nil {
			p.Priority = override
		}
		res.Warnings = append(res.Warnings, o.warnings...)
		if p.Err != nil {
			who := launches[i].origin
			if who == "builtin" {
				who = "built-in provider " + launches[i].name
			}
			what := "provider skipped: "
			if p.Status == StatusRefused {
				what = "provider refused, not started: "
			}
			res.Warnings = append(res.Warnings, diag.Warning{Source: who, Message: what + p.Err.Error()})
		} else {
			sets = append(sets, providerRules{Name: p.Name, Priority: p.Priority, Order: i, Rules: o.rules})
		}
		res.Providers = append(res.Providers, p)
	}
	var mergeWarnings []diag.Warning
	res.Rules, mergeWarnings = merge(sets)
	res.Warnings = append(res.Warnings, mergeWarnings...)
	if w, ok := refusedWarning(res.Providers); ok {
		res.Warnings = append(res.Warnings, w)
	}
}
