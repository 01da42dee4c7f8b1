// Package sandbox confines a provider process before its code runs: an
// environment reduced to an allow-list, and on Linux a Landlock domain that
// lets the provider read and execute only what it needs to start, keeps it
// out of the workspace and the home directory, and denies it the network.
//
// The confinement is imposed by the host, not left to the provider: the host
// starts its own binary in trampoline mode (ExecEnv set), the trampoline
// restricts itself and then replaces itself with the provider, which inherits
// the domain and can never leave it. A host that uses the broker must call
// Main first thing in its main function.
package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// defaultEnv is the allow-list of environment variables a provider gets from
// the host. A name ending in "*" is a prefix. Everything else — API keys,
// tokens, cloud credentials — stays with the host.
var defaultEnv = []string{"PATH", "HOME", "LANG", "LC_*", "TZ", "TMPDIR", "RULEBROKER_*"}

// DefaultEnv returns the default allow-list; a new slice each call, so a
// host can extend it without touching anyone else's.
func DefaultEnv() []string { return append([]string(nil), defaultEnv...) }

// FilterEnv returns the entries of environ ("NAME=value") whose name the
// allow-list admits, in their original order.
func FilterEnv(environ, allow []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if allowed(name, allow) && !strings.HasPrefix(name, envPrefix) {
			out = append(out, kv)
		}
	}
	return out
}

func allowed(name string, allow []string) bool {
	for _, a := range allow {
		if p, ok := strings.CutSuffix(a, "*"); ok {
			if strings.HasPrefix(name, p) {
				return true
			}
		} else if name == a {
			return true
		}
	}
	return false
}

// The trampoline's instructions travel in the environment: the host's
// environment is already reduced to the allow-list by then, and these are
// removed before the provider runs, so the provider never sees them.
const (
	envPrefix = "RULEBROKER_SANDBOX_"
	// ExecEnv marks a process started as the trampoline. Its value is the
	// file descriptor of the provider binary to execute.
	ExecEnv  = envPrefix + "EXEC"
	roEnv    = envPrefix + "RO"    // read+execute, colon-separated
	rwEnv    = envPrefix + "RW"    // read+write (the socket directory)
	modeEnv  = envPrefix + "MODE"  // "landlock" or "off"
	argv0Env = envPrefix + "ARGV0" // the name the provider sees as argv[0]
)

// ExecFD is the descriptor the trampoline executes: the first of
// exec.Cmd.ExtraFiles, so the exact file the host opened and hashed runs,
// not whatever the path names by then.
const ExecFD = 3

// Spec is what one provider may touch.
type Spec struct {
	// Binary is the provider's path, its argv[0]. The read+execute rule is
	// on the descriptor the trampoline executes, not on this path: the
	// file the host verified, even if the path names another one by now.
	Binary string
	// ReadExec are further files or directories the provider may read and
	// execute: system libraries, the dynamic loader's cache, a shell.
	ReadExec []string
	// ReadWrite are directories the provider may also write and connect to
	// sockets in: the go-plugin socket directory.
	ReadWrite []string
	// Off starts the provider without Landlock (the environment is still
	// reduced).
	Off bool
}

// SystemReadExec are the paths every provider may read and execute: where a
// dynamically linked binary's loader and libraries live, and the shell a
// wrapper script starts with. None of them holds a user's data.
func SystemReadExec() []string {
	return []string{
		"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/libexec",
		"/lib", "/lib32", "/lib64", "/libx32", "/usr/lib", "/usr/lib32", "/usr/lib64",
		"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
		"/dev/null", "/dev/urandom",
	}
}

// Env returns the variables that make a trampoline run spec; the host adds
// them to the trampoline's environment.
func (s Spec) Env() []string {
	mode := "landlock"
	if s.Off {
		mode = "off"
	}
	return []string{
		fmt.Sprintf("%s=%d", ExecEnv, ExecFD),
		roEnv + "=" + strings.Join(append([]string{s.Binary}, s.ReadExec...), string(filepath.ListSeparator)),
		rwEnv + "=" + strings.Join(s.ReadWrite, string(filepath.ListSeparator)),
		modeEnv + "=" + mode,
		argv0Env + "=" + s.Binary,
	}
}

// specFromEnv reads back what Env wrote.
func specFromEnv(getenv func(string) string) Spec {
	split := func(v string) []string {
		if v == "" {
			return nil
		}
		return strings.Split(v, string(filepath.ListSeparator))
	}
	s := Spec{Binary: getenv(argv0Env), ReadWrite: split(getenv(rwEnv)), Off: getenv(modeEnv) == "off"}
	if ro := split(getenv(roEnv)); len(ro) > 0 {
		s.ReadExec = ro[1:]
	}
	return s
}

// Requested reports whether this process was started as a trampoline.
func Requested() bool { return os.Getenv(ExecEnv) != "" }

// A trampoline's main goroutine stays on the thread the host started, so
// that the exec that becomes the provider keeps the parent-death signal the
// host gave that thread (see execFD).
func init() {
	if Requested() {
		runtime.LockOSThread()
	}
}

// Main turns this process into the sandboxed provider when it was started
// as a trampoline, and returns at once otherwise; call it first in main. It
// never returns in trampoline mode: on failure it says why on stderr (the
// host shows the provider's last stderr line in its warning) and exits,
// because a provider the host asked to confine must not run unconfined.
func Main() {
	if !Requested() {
		return
	}
	err := trampoline()
	fmt.Fprintf(os.Stderr, "rulebroker sandbox: %v\n", err)
	os.Exit(126)
}

// trampoline restricts this process as its environment says, drops the
// trampoline's variables, and executes the descriptor it was given.
func trampoline() error {
	hostPID := os.Getppid()
	spec := specFromEnv(os.Getenv)
	fd := os.Getenv(ExecEnv)
	if fd != fmt.Sprint(ExecFD) {
		return fmt.Errorf("%s=%q: want %d", ExecEnv, fd, ExecFD)
	}
	if !spec.Off {
		if err := restrict(spec); err != nil {
			return err
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envPrefix) {
			env = append(env, kv)
		}
	}
	argv := append([]string{spec.Binary}, os.Args[1:]...)
	return execFD(ExecFD, argv, env, hostPID)
}
