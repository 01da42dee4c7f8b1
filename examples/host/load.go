package main

import (
	"context"
	"os"

	"github.com/rulebroker/rulebroker/host-sdk/broker"
	"github.com/rulebroker/rulebroker/host-sdk/diag"
	"github.com/rulebroker/rulebroker/host-sdk/instructions"
	"github.com/rulebroker/rulebroker/host-sdk/workfs"
	"github.com/rulebroker/rulebroker/shared"
)

// hostFS is the filesystem every provider and the reconciler read through.
// By default it is confined to what they need: the workspace, the home-level
// rule and instruction locations the built-in providers and the reconciler
// use, and the --allow-root directories. --allow-any-path lifts the
// confinement; pseudo-filesystems and files that are not regular stay
// unreadable either way.
func hostFS(ctx context.Context, cfg *config) (shared.HostFS, error) {
	if cfg.allowAnyPath {
		return workfs.AllowAny(workfs.OS{}), nil
	}
	root, err := workspaceRoot(ctx, cfg)
	if err != nil {
		return nil, err
	}
	roots := workfs.DefaultRoots(workfs.Locations{
		Home:          cfg.home,
		WorkspaceRoot: root,
		DSHHome:       instructions.DefaultDSHHome(os.Getenv, cfg.home),
		Cwd:           cfg.cwd,
	})
	roots = append(roots, workfs.Tree(cfg.allowRoots...)...)
	return workfs.NewPolicyRoots(ctx, workfs.OS{}, roots...)
}

// workspaceRoot finds the workspace root before there is a policy to read
// through, with one that lets through only the probes for root markers in
// cwd and its ancestors. Its warnings are reported by the later search
// through the real policy, which finds the same root.
func workspaceRoot(ctx context.Context, cfg *config) (string, error) {
	var probes []workfs.Root
	for _, m := range cfg.rootMarkers {
		probes = append(probes, workfs.Exact(workfs.Ancestors(cfg.cwd, m)...)...)
	}
	markers, err := workfs.NewPolicyRoots(ctx, workfs.OS{}, probes...)
	if err != nil {
		return "", err
	}
	root, _, err := workfs.FindRoot(ctx, markers, cfg.cwd, cfg.rootMarkers)
	return root, err
}

// brokerSetup is what loadRules and the live session start the broker with:
// the options, the request, and the workspace root's warnings.
func brokerSetup(ctx context.Context, cfg *config) (broker.Options, shared.DiscoverRequest, []diag.Warning, error) {
	fsys, err := hostFS(ctx, cfg)
	if err != nil {
		return broker.Options{}, shared.DiscoverRequest{}, nil, err
	}
	root, rootWarnings, err := workfs.FindRoot(ctx, fsys, cfg.cwd, cfg.rootMarkers)
	if err != nil {
		return broker.Options{}, shared.DiscoverRequest{}, nil, err
	}
	var linked []broker.Builtin
	if !cfg.noBuiltins {
		linked = builtins()
	}
	var warns []diag.Warning
	for _, w := range rootWarnings {
		// The whole text as the message: how root warnings have always been shown.
		warns = append(warns, diag.Warning{Message: w.String()})
	}
	return broker.Options{
		Builtins: linked,
		// --plugin-dir is the developer's explicit choice and runs without
		// the lock; the plugin path and ~/.rulebroker/plugins need it.
		DevPluginDirs: cfg.pluginDirs,
		PluginDirs:    broker.PluginDirs(nil, os.Getenv(broker.PluginPathEnv), cfg.home),
		LockFile:      lockFile(cfg),
		TrustHint:     func(path string) string { return trustCommand(path, cfg.home) },
		FS:            fsys,
		Timeout:       cfg.timeout,
		Priority:      cfg.priority,
		Activation:    cfg.activation,

		MaxRuleBytes:        cfg.caps.maxRuleBytes,
		MaxRulesPerProvider: cfg.caps.maxRules,
		MaxProviderBytes:    cfg.caps.maxProviderBytes,
		HostFSCallBudget:    cfg.caps.callBudget,
		HostFSInFlight:      cfg.caps.inFlight,
		AllowBuiltinNames:   cfg.allowBuiltin,
	}, shared.DiscoverRequest{Cwd: cfg.cwd, Home: cfg.home, WorkspaceRoot: root}, warns, nil
}

// loadRules runs every provider once and merges what they find.
func loadRules(ctx context.Context, cfg *config) (broker.Result, error) {
	opts, req, rootWarnings, err := brokerSetup(ctx, cfg)
	if err != nil {
		return broker.Result{}, err
	}
	res, err := broker.Load(ctx, opts, req)
	if ctx.Err() != nil {
		// Interrupted: the providers are already stopped; print nothing half-done.
		return broker.Result{}, errInterrupted
	}
	res.Warnings = append(res.Warnings, rootWarnings...)
	return res, err
}

// startLive starts the providers for a session or a watch and keeps them
// running (a live broker) until its Close. Beside it come the request it
// discovers with and the workspace root's warnings, for the host to show with
// the broker's.
func startLive(ctx context.Context, cfg *config) (*broker.Live, shared.DiscoverRequest, []diag.Warning, error) {
	opts, req, rootWarnings, err := brokerSetup(ctx, cfg)
	if err != nil {
		return nil, req, nil, err
	}
	live, err := broker.Start(ctx, opts, req)
	if ctx.Err() != nil {
		// Start stops what it started when it is interrupted.
		return nil, req, nil, errInterrupted
	}
	if err != nil {
		return nil, req, nil, err
	}
	return live, req, rootWarnings, nil
}
