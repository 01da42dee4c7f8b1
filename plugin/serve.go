package plugin

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/rulebroker/rulebroker/internal/wire"
	"github.com/rulebroker/rulebroker/plugin/frontmatter"
	"github.com/rulebroker/rulebroker/shared"
)

// Serve runs p as a provider plugin process and returns when the host is done
// with it. It logs as hclog JSON on stderr; stdout carries the go-plugin
// handshake and nothing else, so a provider must never print to it.
func Serve(p Provider) {
	logger := hclog.New(&hclog.LoggerOptions{
		Name:       "rulebroker-provider-" + p.Info().Name,
		Output:     os.Stderr,
		JSONFormat: true,
		Level:      hclog.Info,
	})
	a := newAdapter(p)
	a.log = logger
	wire.Serve(a, logger)
}

// adapter presents an SDK provider as the wire's shared.Provider: it converts
// the host's absolute paths to FS names on the way in, and the provider's
// names back to absolute paths on the way out.
type adapter struct {
	p Provider
	// parsed remembers, across the discoveries of this process, the
	// frontmatter of the files read through the host, so a re-discovery
	// after one file changed parses that file alone.
	parsed *frontmatter.Cache
	// answers keeps the host's answers of the latest discovery, which the
	// host's "unchanged" answers in the next one stand for.
	answers *answerMemory
	log     hclog.Logger
}

func newAdapter(p Provider) adapter {
	return adapter{p: p, parsed: frontmatter.NewCache(), answers: newAnswerMemory(), log: hclog.NewNullLogger()}
}

func (a adapter) Describe(context.Context) (shared.ProviderInfo, error) {
	info := a.p.Info()
	out := shared.ProviderInfo{Name: info.Name, Version: info.Version, Priority: info.Priority,
		// The SDK keeps each discovery's answers (see answerMemory).
		Capabilities: []string{shared.CapabilityUnchangedAnswers}}
	// Checked here so the author reads what is wrong in the host's warning,
	// instead of a priority wrapped on its way through the protocol's int32.
	if err := out.Check(); err != nil {
		return shared.ProviderInfo{}, err
	}
	return out, nil
}

func (a adapter) Discover(ctx context.Context, req shared.DiscoverRequest, fsys shared.HostFS, sink shared.Sink) (err error) {
	// A provider bug must cost this call, not the process: the host reports
	// the error as a warning and keeps every other provider's rules.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("provider panicked: %v", r)
		}
	}()
	a.parsed.Rotate()
	a.answers.begin()
	defer a.answers.end()
	parsed, remembered := a.parsed.Stats()
	defer func() {
		p, r := a.parsed.Stats()
		a.log.Debug("discovered", "files parsed", p-parsed, "files remembered", r-remembered, "error", err)
	}()
	res, err := a.p.Discover(ctx, Request{
		Cwd:           fsName(req.Cwd),
		Home:          fsName(req.Home),
		WorkspaceRoot: fsName(req.WorkspaceRoot),
		Activation:    mode(req.Activation),
		ExtraDirs:     fsNames(req.ExtraDirs),
		MaxRuleBytes:  maxRuleBytes(req.MaxRuleBytes),
		FS:            newHostFS(ctx, withPrefetch(fsys, req.Prefetch, a.answers), maxRuleBytes(req.MaxRuleBytes), a.parsed),
	})
	for _, w := range res.Warnings {
		if serr := sink.Warning(shared.Warning{Path: absPath(w.Path), Message: w.Message}); serr != nil {
			return serr
		}
	}
	if err != nil {
		// The host drops a failed provider's rules; its warnings still help.
		return err
	}
	for _, r := range res.Rules {
		if serr := sink.Rule(wireRule(r)); serr != nil {
			return serr
		}
	}
	return nil
}

func wireRule(r Rule) shared.Rule {
	return shared.Rule{
		Name:        r.Name,
		Path:        absPath(r.Path),
		Content:     r.Content,
		Globs:       r.Globs,
		AlwaysApply: r.AlwaysApply,
		Description: r.Description,
		Condition:   r.Condition,
		Level:       shared.Level(r.Level),

		Activation:       shared.Activation(r.Activation),
		ActivationSource: r.ActivationSource,
		GlobBase:         absPath(r.GlobBase),
	}
}

// mode reads the host's activation mode; a host that predates modes, or
// names one this SDK does not know, gets the reference behaviour.
func mode(m shared.ActivationMode) Mode {
	if m == shared.ModeNative {
		return ModeNative
	}
	return ModeReference
}

// maxRuleBytes is the host's per-rule cap, or the shared default when the
// host sets none.
func maxRuleBytes(n int64) int64 {
	if n <= 0 {
		return shared.DefaultMaxRuleBytes
	}
	return n
}

func fsNames(abs []string) []string {
	if len(abs) == 0 {
		return nil
	}
	out := make([]string, len(abs))
	for i, a := range abs {
		out[i] = fsName(a)
	}
	return out
}

// fsName converts the host's absolute path to a name in Request.FS ("/a/b" →
// "a/b", "/" → "."). An empty path, meaning none was given, stays empty.
func fsName(abs string) string {
	if abs == "" {
		return ""
	}
	name := strings.TrimPrefix(path.Clean("/"+abs), "/")
	if name == "" {
		return "."
	}
	return name
}

// absPath converts a name in Request.FS to the host's absolute path ("a/b" →
// "/a/b", "." → "/"). A path that is already absolute is the provider's own
// choice and passes as is; an empty one stays empty.
func absPath(name string) string {
	if name == "" || strings.HasPrefix(name, "/") {
		return name
	}
	return path.Clean("/" + name)
}
