package broker

import (
	"fmt"
	"os"
	"os/exec"
)

// BuiltinEnv is set in the environment of a host binary that is re-executed to
// serve one of the providers it links. Its value is the provider's name.
const BuiltinEnv = "RULEBROKER_SERVE_BUILTIN"

// Builtin is a provider the host links in. It still runs as its own process:
// Command starts it, usually the host's own binary with BuiltinEnv set.
type Builtin struct {
	Name    string
	Command func() (*exec.Cmd, error)
}

// SelfExec returns a Builtin that re-executes the running binary with
// BuiltinEnv=name. The host's main must check BuiltinRequested first thing and
// serve that provider instead of doing its usual work.
func SelfExec(name string) Builtin {
	return Builtin{Name: name, Command: func() (*exec.Cmd, error) {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the host binary to start built-in provider %q: %w", name, err)
		}
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), BuiltinEnv+"="+name)
		return cmd, nil
	}}
}

// BuiltinRequested returns the name of the built-in provider this process was
// started to serve, or "" when it is the host itself.
func BuiltinRequested() string { return os.Getenv(BuiltinEnv) }
