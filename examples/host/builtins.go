package main

import (
	"github.com/rulebroker/rulebroker/host-sdk/broker"
	"github.com/rulebroker/rulebroker/plugin"
	"github.com/rulebroker/rulebroker/providers/cline"
	"github.com/rulebroker/rulebroker/providers/cursor"
	"github.com/rulebroker/rulebroker/providers/native"
	"github.com/rulebroker/rulebroker/providers/windsurf"
)

// builtinNames is the registration order of the linked providers: equal
// priorities keep it (cursor before windsurf).
func builtinNames() []string { return []string{"native", "cursor", "windsurf", "cline"} }

func builtinProvider(name string) (plugin.Provider, bool) {
	switch name {
	case "native":
		return native.New(), true
	case "cursor":
		return cursor.New(), true
	case "windsurf":
		return windsurf.New(), true
	case "cline":
		return cline.New(), true
	}
	return nil, false
}

// builtins starts each linked provider as a child process of this binary.
func builtins() []broker.Builtin {
	names := builtinNames()
	out := make([]broker.Builtin, len(names))
	for i, name := range names {
		out[i] = broker.SelfExec(name)
	}
	return out
}
