package broker

import (
	"os"
)

// BuiltinEnv is set in the environment of a host binary that is re-executed to
// serve one of the providers it links. Its value is the provider's name.
const BuiltinEnv = "RULEBROKER_SERVE_BUILTIN"

// Builtin is a provider the host links in. It still runs as its own process,
// sandboxed like any other: the host's own binary (or Path) with Args and
// the extra variables Env.
type Builtin struct {
	Name string
	// Path is the binary to run; empty means the running host binary.
	Path string
	Args []string
	// Env is added to the provider's allow-listed environment as is.
	Env []string
}

// SelfExec returns a Builtin that re-executes the running binary with
// BuiltinEnv=name. The host's main must check BuiltinRequested first thing and
// serve that provider instead of doing its usual work.
func SelfExec(name string) Builtin {
	return Builtin{Name: name, Env: []string{BuiltinEnv + "=" + name}}
}

// BuiltinRequested returns the name of the built-in provider this process was
// started to serve, or "" when it is the host itself.
func BuiltinRequested() string { return os.Getenv(BuiltinEnv) }
