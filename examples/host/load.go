package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/rulebroker/rulebroker/host-sdk/broker"
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

// workspaceRoot is the nearest ancestor of cwd (cwd included) holding a root
// marker, else cwd.
func workspaceRoot(cfg *config) string {
	for dir := cfg.cwd; ; dir = filepath.Dir(dir) {
		for _, m := range cfg.rootMarkers {
			if _, err := os.Lstat(filepath.Join(dir, m)); err == nil {
				return dir
			}
		}
		if filepath.Dir(dir) == dir {
			return cfg.cwd
		}
	}
}

// loadRules runs every provider once and merges what they find.
func loadRules(ctx context.Context, cfg *config) (broker.Result, error) {
	fsys, err := hostFS(ctx, cfg)
	if err != nil {
		return broker.Result{}, err
	}
	return broker.Load(ctx, broker.Options{
		Builtins:   builtins(),
		PluginDirs: broker.PluginDirs(cfg.pluginDirs, os.Getenv(broker.PluginPathEnv), cfg.home),
		FS:         fsys,
		Timeout:    cfg.timeout,
		Priority:   cfg.priority,
	}, shared.DiscoverRequest{Cwd: cfg.cwd, Home: cfg.home, WorkspaceRoot: workspaceRoot(cfg)})
}
