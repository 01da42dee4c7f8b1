// Command host is an example agent host built on rulebroker. It discovers rules
// through the provider plugins, renders them as a model would see them, loads
// the workspace instructions, and replays a session of agent events. It is the
// project's end-to-end test harness and its demo.
//
// Usage:
//
//	host rules        [flags] [--watch]  every discovered rule, the providers, the warnings
//	host prompt       [flags]            the rules section of the system prompt
//	host read         [flags] rule://NAME  one rule's content
//	host instructions [flags]            the workspace instructions baseline
//	host session      [flags]            JSON events on stdin, one JSON line out per event
//	host plugins      [flags] [trust PATH...]  the providers found and how far they are trusted
//
// The same binary serves its built-in providers: the broker re-executes it with
// RULEBROKER_SERVE_BUILTIN set, and main serves that provider instead.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/rulebroker/rulebroker/host-sdk/broker"
	"github.com/rulebroker/rulebroker/host-sdk/sandbox"
	"github.com/rulebroker/rulebroker/plugin"
)

func main() {
	// Started as a provider's sandbox trampoline: confine, then become the
	// provider. Never returns in that mode.
	sandbox.Main()
	if name := broker.BuiltinRequested(); name != "" {
		p, ok := builtinProvider(name)
		if !ok {
			fmt.Fprintf(os.Stderr, "host: no built-in provider %q\n", name)
			os.Exit(2)
		}
		plugin.Serve(p)
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// exitError carries a command's exit status and what to tell the user.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "host: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	cfg, rest, err := parseFlags(args[0], args[1:], stderr)
	if err != nil {
		return 2
	}
	err = cmd(ctx, cfg, rest, stdin, stdout)
	if err != nil && ctx.Err() != nil {
		err = errInterrupted
	}
	var ee *exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ee.msg != "" {
			fmt.Fprintln(stderr, "host:", ee.msg)
		}
		return ee.code
	default:
		fmt.Fprintln(stderr, "host:", err)
		return 1
	}
}

// errInterrupted ends a command cut short by SIGINT or SIGTERM, with the shell's
// usual status for an interrupt.
var errInterrupted = &exitError{code: 130, msg: "interrupted"}

type command func(ctx context.Context, cfg *config, args []string, stdin io.Reader, stdout io.Writer) error

func lookup(name string) (command, bool) {
	switch name {
	case "rules":
		return cmdRules, true
	case "prompt":
		return cmdPrompt, true
	case "read":
		return cmdRead, true
	case "instructions":
		return cmdInstructions, true
	case "session":
		return cmdSession, true
	case "plugins":
		return cmdPlugins, true
	}
	return nil, false
}

const usage = `usage: host <command> [flags] [args]

commands:
  rules          every discovered rule in merge order, the providers, the warnings
  prompt         the rules section of the system prompt, exactly as the model gets it
  read URL       the content of rule://NAME
  instructions   the workspace instructions baseline: loaded scopes and the message
  session        JSON events on stdin, one JSON line per event on stdout
  plugins        every provider found: status (builtin, verified, unverified,
                 refused and why), version, priorities, sha256, sandbox
  plugins trust PATH...
                 record binaries in ~/.rulebroker/plugins.lock (under --home);
                 binaries from $RULEBROKER_PLUGIN_PATH and ~/.rulebroker/plugins
                 run only when it lists their exact bytes

flags (all commands):
  --cwd DIR              working directory (default .)
  --home DIR             home directory (default $HOME)
  --plugin-dir DIR       a directory of rulebroker-provider-* binaries (repeatable),
                         run without the lock (unverified); then
                         $RULEBROKER_PLUGIN_PATH, then ~/.rulebroker/plugins
  --json                 one JSON document instead of tables
  --no-builtins          start only the providers found in plugin directories
  --timeout DURATION     per-provider deadline (default 5s)
  --priority NAME=N      override a provider's priority (repeatable)
  --allow-root DIR       also allow reads under DIR (repeatable); by default reads
                         are confined to the workspace and the rule locations
  --allow-any-path       lift that confinement (pseudo-filesystems and
                         non-regular files stay unreadable)
  --activation MODE      native (default): rules take effect as their own tool
                         applies them; reference: the reference pipeline exactly
  --allow-builtin-names  let a third-party provider take a built-in's name
                         (refused by default: it would shadow the built-in)
  --max-rule-bytes N     cap on one rule file, read and accepted (default 4 MiB)
  --max-rules N          cap on the rules of one provider (default 100000)
  --max-provider-bytes N cap on the bytes one provider delivers (default 64 MiB)
  --hostfs-call-budget N cap on the file bytes one batched read returns (default 16 MiB)
  --hostfs-in-flight N   cap on the file bytes all providers' reads hold at once
                         (default 32 MiB)
flags (rules):
  --watch                keep the providers running and print the rules again
                         whenever they change (with --json: one document per
                         line); ends on Ctrl-C
  --interval DURATION    how often --watch checks (default 1s)
flags (instructions, session):
  --candidates A,B       base instruction files (default AGENTS.md,CLAUDE.md)
  --local-candidates A,B local overlays (default AGENTS.local.md,CLAUDE.local.md)
  --root-marker M        workspace root marker (repeatable; default .git)
  --budget BYTES         total instruction byte budget
DSH_HOME (default <home>/.dsh) holds the user-global AGENTS.md.
`
