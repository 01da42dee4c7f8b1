package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rulebroker/rulebroker/host-sdk/broker"
	"github.com/rulebroker/rulebroker/shared"
)

// config is what the flags say, with paths made absolute.
type config struct {
	cwd, home    string
	pluginDirs   []string
	json         bool
	noBuiltins   bool
	timeout      time.Duration
	priority     map[string]int
	allowRoots   []string
	allowAnyPath bool
	allowBuiltin bool
	candidates   []string
	locals       []string
	rootMarkers  []string
	budget       int
	activation   shared.ActivationMode
	caps         caps
	// watch (rules): keep the providers up and print again on a change,
	// checking every interval.
	watch    bool
	interval time.Duration
}

// caps are the broker's limits on what one provider may cost; zero is the
// broker's default.
type caps struct {
	maxRuleBytes     int64
	maxRules         int
	maxProviderBytes int64
	callBudget       int64
	inFlight         int64
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

type priorityFlag map[string]int

func (p priorityFlag) String() string { return fmt.Sprint(map[string]int(p)) }
func (p priorityFlag) Set(v string) error {
	name, n, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=N, got %q", v)
	}
	prio, err := strconv.Atoi(n)
	if err != nil {
		return fmt.Errorf("priority of %s: %w", name, err)
	}
	p[name] = prio
	return nil
}

// splitList splits a comma-separated flag. An empty flag gives an empty,
// non-nil list: "no candidates", not "the defaults".
func splitList(s string) []string {
	out := []string{}
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// parseFlags accepts flags before and after positional arguments.
func parseFlags(name string, args []string, stderr io.Writer) (*config, []string, error) {
	cfg := &config{priority: map[string]int{}}
	var pluginDirs, allowRoots, markers listFlag
	var candidates, locals string
	fset := flag.NewFlagSet(name, flag.ContinueOnError)
	fset.SetOutput(stderr)
	fset.Usage = func() { fmt.Fprint(stderr, usage) }
	fset.StringVar(&cfg.cwd, "cwd", ".", "working directory")
	fset.StringVar(&cfg.home, "home", os.Getenv("HOME"), "home directory")
	fset.Var(&pluginDirs, "plugin-dir", "plugin directory (repeatable)")
	fset.BoolVar(&cfg.json, "json", false, "print one JSON document")
	fset.BoolVar(&cfg.noBuiltins, "no-builtins", false, "start only the providers found in plugin directories")
	fset.DurationVar(&cfg.timeout, "timeout", broker.DefaultTimeout, "per-provider deadline")
	fset.Var(priorityFlag(cfg.priority), "priority", "NAME=N priority override (repeatable)")
	fset.Var(&allowRoots, "allow-root", "also allow reads under this root (repeatable)")
	fset.BoolVar(&cfg.allowAnyPath, "allow-any-path", false, "read outside the workspace and the rule locations too")
	fset.BoolVar(&cfg.allowBuiltin, "allow-builtin-names", false, "let a third-party provider use a built-in provider's name")
	fset.StringVar(&candidates, "candidates", "AGENTS.md,CLAUDE.md", "base instruction candidates")
	fset.StringVar(&locals, "local-candidates", "AGENTS.local.md,CLAUDE.local.md", "local overlay candidates")
	fset.Var(&markers, "root-marker", "workspace root marker (repeatable)")
	fset.IntVar(&cfg.budget, "budget", 0, "instruction byte budget (0: the default)")
	fset.Int64Var(&cfg.caps.maxRuleBytes, "max-rule-bytes", broker.DefaultMaxRuleBytes, "cap on one rule file")
	fset.IntVar(&cfg.caps.maxRules, "max-rules", broker.DefaultMaxRulesPerProvider, "cap on the rules of one provider")
	fset.Int64Var(&cfg.caps.maxProviderBytes, "max-provider-bytes", broker.DefaultMaxProviderBytes, "cap on the bytes one provider delivers")
	fset.Int64Var(&cfg.caps.callBudget, "hostfs-call-budget", broker.DefaultHostFSCallBudget, "cap on the file bytes one batched read returns")
	fset.Int64Var(&cfg.caps.inFlight, "hostfs-in-flight", broker.DefaultHostFSInFlight, "cap on the file bytes all reads hold at once")
	fset.BoolVar(&cfg.watch, "watch", false, "rules: print again whenever the rules change")
	fset.DurationVar(&cfg.interval, "interval", time.Second, "rules --watch: how often to check")
	activation := string(shared.ModeNative)
	fset.StringVar(&activation, "activation", activation, "native or reference")

	var positional []string
	for {
		if err := fset.Parse(args); err != nil {
			return nil, nil, err
		}
		if fset.NArg() == 0 {
			break
		}
		positional = append(positional, fset.Arg(0))
		args = fset.Args()[1:]
	}

	switch m := shared.ActivationMode(activation); m {
	case shared.ModeNative, shared.ModeReference:
		cfg.activation = m
	default:
		fmt.Fprintf(stderr, "host: --activation %q: want native or reference\n", activation)
		return nil, nil, fmt.Errorf("--activation %q: want native or reference", activation)
	}
	var err error
	if cfg.cwd, err = filepath.Abs(cfg.cwd); err != nil {
		return nil, nil, err
	}
	// Everything hangs off cwd; a typo there should fail loudly, not look
	// like a workspace without rules.
	if fi, err := os.Stat(cfg.cwd); err != nil || !fi.IsDir() {
		fmt.Fprintf(stderr, "host: --cwd %s is not a directory\n", cfg.cwd)
		return nil, nil, fmt.Errorf("--cwd %s is not a directory", cfg.cwd)
	}
	if cfg.home != "" {
		if cfg.home, err = filepath.Abs(cfg.home); err != nil {
			return nil, nil, err
		}
	}
	for _, d := range pluginDirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, nil, err
		}
		cfg.pluginDirs = append(cfg.pluginDirs, abs)
	}
	for _, d := range allowRoots {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, nil, err
		}
		cfg.allowRoots = append(cfg.allowRoots, abs)
	}
	for _, c := range []struct {
		name string
		v    int64
	}{
		{"max-rule-bytes", cfg.caps.maxRuleBytes}, {"max-rules", int64(cfg.caps.maxRules)},
		{"max-provider-bytes", cfg.caps.maxProviderBytes}, {"hostfs-call-budget", cfg.caps.callBudget},
		{"hostfs-in-flight", cfg.caps.inFlight},
	} {
		if c.v <= 0 {
			fmt.Fprintf(stderr, "host: --%s must be positive, got %d\n", c.name, c.v)
			return nil, nil, fmt.Errorf("--%s must be positive", c.name)
		}
	}
	if cfg.watch && name != "rules" {
		fmt.Fprintf(stderr, "host: --watch is a flag of rules only\n")
		return nil, nil, fmt.Errorf("--watch is a flag of rules only")
	}
	if cfg.interval < 10*time.Millisecond {
		fmt.Fprintf(stderr, "host: --interval must be at least 10ms, got %v\n", cfg.interval)
		return nil, nil, fmt.Errorf("--interval too short")
	}
	cfg.candidates = splitList(candidates)
	cfg.locals = splitList(locals)
	cfg.rootMarkers = markers
	if len(cfg.rootMarkers) == 0 {
		cfg.rootMarkers = []string{".git"}
	}
	return cfg, positional, nil
}
