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
	Err     error    // why it contributed nothing, if it failed
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

// Load starts every provider in parallel, runs Discover once on each, stops
// them all, and merges the results. It fails only when the options are
// unusable; every provider problem is a warning in the result.
func Load(ctx context.Context, opts Options, req shared.DiscoverRequest) (Result, error) {
	if opts.FS == nil {
		return Result{}, errors.New("broker: Options.FS is required")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Activation != "" {
		req.Activation = opts.Activation
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
	client *wire.Client
	stderr *stderrTail
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
	client, err := wire.Start(ctx, wire.Config{
		Command: func(socketDir string) (*exec.Cmd, error) {
			return l.command(opts, socketDir)
		},
		StartTimeout: opts.Timeout,
		Logger:       opts.Logger.Named(l.name),
		Stderr:       stderr,
	})
	if err != nil {
		out.fail(stderr, explain("start", err, opts.Timeout))
		return nil
	}
	out.provider.PID = client.PID

	info, err := client.Provider.Describe(ctx)
	if err == nil && info.Name == "" {
		err = errors.New("describe: the provider has no name")
	} else if err != nil {
		err = explain("describe", err, opts.Timeout)
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
	return &started{client: client, stderr: stderr}
}

// discover runs Discover on a started provider through fsys, filling in
// out's rules, warnings and reads. The process keeps running.
func (s *started) discover(ctx context.Context, opts Options, req shared.DiscoverRequest, fsys *recordingFS, out *outcome) {
	sink := &collect{provider: out.provider.Name}
	err := s.client.Provider.Discover(ctx, req, fsys, sink)
	out.provider.Reads, out.provider.Refused = fsys.read()
	out.warnings = sink.warnings
	if err != nil {
		out.fail(s.stderr, explain("discover", err, opts.Timeout))
		return
	}
	out.provider.Err = nil
	out.rules = sink.rules
	out.provider.Rules = len(sink.rules)
}

// collect gathers a provider's stream, checking each item.
type collect struct {
	provider string
	rules    []shared.Rule
	warnings []diag.Warning
}

func (c *collect) Rule(r shared.Rule) error {
	if r.Name == "" {
		c.warnings = append(c.warnings, diag.Warning{Source: c.provider, Path: r.Path, Message: "rule has no name; ignored"})
		return nil
	}
	c.rules = append(c.rules, r)
	return nil
}

func (c *collect) Warning(w shared.Warning) error {
	c.warnings = append(c.warnings, diag.Warning{Source: c.provider, Path: w.Path, Message: w.Message})
	return nil
}

// assemble merges the providers' outcomes into res, in registration order,
// with a warning for each provider that failed.
func assemble(opts Options, launches []launch, outcomes []outcome, res *Result) {
	sets := make([]providerRules, 0, len(outcomes))
	firstOrigin := map[string]string{} // provider name → origin of the first provider with it
	for i, o := range outcomes {
		p := o.provider
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
	res.Rules = merge(sets)
	if w, ok := refusedWarning(res.Providers); ok {
		res.Warnings = append(res.Warnings, w)
	}
}
