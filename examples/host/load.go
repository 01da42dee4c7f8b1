package main

import (
	"context"
	"os"

	"github.com/rulebroker/rulebroker/host-sdk/broker"
	"github.com/rulebroker/rulebroker/host-sdk/diag"
	"github.com/rulebroker/rulebroker/host-sdk/workfs"
	"github.com/rulebroker/rulebroker/shared"
)

// hostFS is the filesystem every provider and the reconciler read through:
// the real one, confined to --allow-root directories when any are given.
func hostFS(ctx context.Context, cfg *config) (shared.HostFS, error) {
	if len(cfg.allowRoots) == 0 {
		return workfs.OS{}, nil
	}
	return workfs.NewPolicy(ctx, workfs.OS{}, cfg.allowRoots...)
}

// loadRules runs every provider once and merges what they find.
func loadRules(ctx context.Context, cfg *config) (broker.Result, error) {
	fsys, err := hostFS(ctx, cfg)
	if err != nil {
		return broker.Result{}, err
	}
	root, rootWarnings, err := workfs.FindRoot(ctx, fsys, cfg.cwd, cfg.rootMarkers)
	if err != nil {
		return broker.Result{}, err
	}
	var linked []broker.Builtin
	if !cfg.noBuiltins {
		linked = builtins()
	}
	res, err := broker.Load(ctx, broker.Options{
		Builtins:   linked,
		PluginDirs: broker.PluginDirs(cfg.pluginDirs, os.Getenv(broker.PluginPathEnv), cfg.home),
		FS:         fsys,
		Timeout:    cfg.timeout,
		Priority:   cfg.priority,
	}, shared.DiscoverRequest{Cwd: cfg.cwd, Home: cfg.home, WorkspaceRoot: root})
	if ctx.Err() != nil {
		// Interrupted: the providers are already stopped; print nothing half-done.
		return broker.Result{}, errInterrupted
	}
	for _, w := range rootWarnings {
		// The whole text as the message: how root warnings have always been shown.
		res.Warnings = append(res.Warnings, diag.Warning{Message: w.String()})
	}
	return res, err
}
