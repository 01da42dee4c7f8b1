package broker

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rulebroker/rulebroker/host-sdk/diag"
	"github.com/rulebroker/rulebroker/host-sdk/sandbox"
	"github.com/rulebroker/rulebroker/host-sdk/trust"
)

// Provider statuses: how the host knows what runs.
const (
	// StatusBuiltin: the host's own binary, serving a provider it links.
	StatusBuiltin = "builtin"
	// StatusVerified: a binary from a plugin directory whose bytes match
	// the lock file.
	StatusVerified = "verified"
	// StatusUnverified: a binary from a directory the developer named
	// explicitly (DevPluginDirs); it runs without the lock.
	StatusUnverified = "unverified"
	// StatusRefused: not started; Provider.Err says why.
	StatusRefused = "refused"
)

// launch is one provider to start, or one that was refused.
type launch struct {
	name   string
	origin string // "builtin" or the binary's path
	path   string // the binary, for argv[0]
	args   []string
	env    []string
	status string
	sha256 string
	// file is the binary, open: hashed, and the very file executed, on
	// every start (a live broker restarts from it). closeLaunches closes it.
	file    *os.File
	refused error
	hostExe string // the trampoline
	sandbox sandboxing
}

// findLaunches lists the providers to start or refuse, in registration
// order: the built-ins, then the plugin directories' binaries; with the
// warnings about finding and verifying them, and the one warning about a
// missing sandbox. The caller closes the launches with closeLaunches.
func findLaunches(opts Options) ([]launch, []diag.Warning) {
	hostExe, hostExeErr := os.Executable()
	launches, warnings := plan(opts, hostExe, hostExeErr)
	sb := sandboxFor(opts)
	for i := range launches {
		launches[i].hostExe, launches[i].sandbox = hostExe, sb
	}
	if !sb.confine && !opts.Unconfined && len(launches) > 0 {
		warnings = append(warnings, diag.Warning{Message: "providers run without a file-system and network sandbox (" +
			strings.TrimPrefix(sb.desc, "none: ") + "); they still get only the allow-listed environment"})
	}
	return launches, warnings
}

func closeLaunches(launches []launch) {
	for _, l := range launches {
		if l.file != nil {
			l.file.Close()
		}
	}
}

// sandboxing is how providers are confined.
type sandboxing struct {
	desc    string // for Provider.Sandbox
	confine bool   // Landlock on
}

func sandboxFor(opts Options) sandboxing {
	if opts.Unconfined {
		return sandboxing{desc: "none: turned off by the host"}
	}
	desc, ok := sandbox.Probe()
	if !trampolined {
		ok = false
	}
	return sandboxing{desc: desc, confine: ok}
}

func (o Options) env() []string {
	if o.Env == nil {
		return sandbox.DefaultEnv()
	}
	return o.Env
}

// plan lists every provider a Load starts or refuses, in registration
// order, with the warnings about finding and verifying them. The caller
// closes the launches' files.
func plan(opts Options, hostExe string, hostExeErr error) (launches []launch, warnings []diag.Warning) {
	for _, b := range opts.Builtins {
		l := launch{name: b.Name, origin: "builtin", path: b.Path, args: b.Args, env: b.Env, status: StatusBuiltin}
		if l.path == "" {
			l.path, l.refused = hostExe, hostExeErr
		}
		if l.refused == nil {
			l.file, l.refused = os.Open(l.path)
		}
		if l.refused != nil {
			l.refused = fmt.Errorf("find the binary of built-in provider %q: %w", b.Name, l.refused)
		}
		launches = append(launches, l)
	}

	var lock trust.Lock
	lockErr := errors.New("no lock file configured")
	if opts.LockFile != "" {
		if lock, lockErr = trust.Read(opts.LockFile); lockErr != nil {
			warnings = append(warnings, diag.Warning{Source: opts.LockFile, Path: opts.LockFile,
				Message: "cannot read the plugin lock file, so no provider from a plugin directory is trusted: " + lockErr.Error()})
		}
	}

	var dirs []string
	dev := map[string]bool{}
	for _, d := range opts.DevPluginDirs {
		dirs = append(dirs, filepath.Clean(d))
		dev[filepath.Clean(d)] = true
	}
	for _, d := range opts.PluginDirs {
		if !dev[filepath.Clean(d)] {
			dirs = append(dirs, filepath.Clean(d))
		}
	}
	found, hidden, problems := findBinaries(dirs)
	for _, p := range problems {
		warnings = append(warnings, diag.Warning{Message: "cannot list plugin directory: " + p.Error()})
	}
	for _, path := range hidden {
		warnings = append(warnings, diag.Warning{Source: path, Path: path,
			Message: "ignored: a provider binary of the same name comes earlier in the plugin path"})
	}
	dirProblem := map[string]error{}
	for _, c := range found {
		dir := filepath.Dir(c.path)
		if _, seen := dirProblem[dir]; !seen {
			dirProblem[dir] = trust.CheckDir(dir)
		}
		l := launch{name: filepath.Base(c.path), origin: c.path, path: c.path, status: StatusVerified}
		if dev[dir] {
			l.status = StatusUnverified
		}
		l.refused = dirProblem[dir]
		// A link is only as safe as the directory of what it points to.
		if real, err := filepath.EvalSymlinks(c.path); l.refused == nil && err == nil && filepath.Dir(real) != dir {
			l.refused = trust.CheckDir(filepath.Dir(real))
		}
		if l.refused == nil {
			l.file, l.sha256, l.refused = openVerified(c.path)
		}
		if l.refused == nil && l.status == StatusVerified {
			if err := lock.Check(c.path, l.sha256); err != nil {
				l.refused = untrusted(opts, c.path, err, lockErr)
			}
		}
		if l.refused != nil {
			l.status = StatusRefused
			if l.file != nil {
				l.file.Close()
				l.file = nil
			}
		}
		launches = append(launches, l)
	}
	return launches, warnings
}

// openVerified opens a provider binary once, checks it, and hashes the open
// file: the descriptor returned is what the trampoline executes, so the
// bytes hashed are the bytes that run, whatever happens to the path.
func openVerified(path string) (*os.File, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	if err := trust.CheckFile(f); err != nil {
		f.Close()
		return nil, "", err
	}
	sum, err := trust.Hash(f)
	if err != nil {
		f.Close()
		return nil, "", err
	}
	return f, sum, nil
}

// untrusted explains a binary the lock does not vouch for, ending with the
// exact command that trusts it.
func untrusted(opts Options, path string, err, lockErr error) error {
	how := "add it to " + opts.LockFile
	if opts.TrustHint != nil {
		how = "run: " + opts.TrustHint(path)
	}
	switch {
	case opts.LockFile == "":
		return fmt.Errorf("not trusted: the host keeps no plugin lock file")
	case lockErr != nil:
		return fmt.Errorf("not trusted: the lock file %s is unreadable; after fixing or removing it, %s", opts.LockFile, how)
	case errors.Is(err, trust.ErrChanged):
		return fmt.Errorf("not trusted: %v; if you trust the new binary, %s", err, how)
	default:
		return fmt.Errorf("not trusted: not in %s; if you trust it, %s", opts.LockFile, how)
	}
}

// command builds the provider's process: the host binary in trampoline mode,
// handed the open binary as its first extra file, with an environment of the
// allow-listed variables only.
func (l launch) command(opts Options, socketDir string) (*exec.Cmd, error) {
	hostExe, confine := l.hostExe, l.sandbox.confine
	env := sandbox.FilterEnv(os.Environ(), opts.env())
	env = append(env, l.env...)
	var cmd *exec.Cmd
	if trampolined {
		if hostExe == "" {
			return nil, errors.New("cannot find the host binary to start the sandbox trampoline")
		}
		spec := sandbox.Spec{
			Binary:    l.path,
			ReadExec:  append(sandbox.SystemReadExec(), opts.ReadExec...),
			ReadWrite: []string{socketDir},
			Off:       !confine,
		}
		cmd = exec.Command(hostExe, l.args...)
		cmd.ExtraFiles = []*os.File{l.file}
		env = append(env, spec.Env()...)
	} else {
		cmd = exec.Command(l.path, l.args...)
	}
	cmd.Env = env
	tieToHost(cmd)
	return cmd, nil
}
