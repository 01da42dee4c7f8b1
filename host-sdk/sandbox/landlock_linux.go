package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// config is the Landlock configuration every provider gets: the newest ABI
// the library knows, degraded to what the kernel has. Every access right of
// that ABI is handled, so what rules do not grant is denied — files, TCP
// and UDP (no rule grants a port), signals and abstract sockets outside the
// provider's own domain.
func config() landlock.Config { return landlock.V11.BestEffort() }

// rules is the trampoline's rule set: read and execute the binary (the open
// file behind the descriptor; a script's interpreter reads it there) and the
// system paths, read and write (and connect to the host's sockets in) the
// socket directory, nothing else. Missing system paths are skipped (not
// every distribution has /lib32); a missing binary or socket directory is
// an error, because then something is wrong.
func rules(s Spec) []landlock.Rule {
	out := []landlock.Rule{landlock.ROFiles(fmt.Sprintf("/proc/self/fd/%d", ExecFD))}
	// Landlock refuses directory rights on a file, so each path gets the
	// rule that fits what it is now.
	var dirs, files []string
	for _, p := range s.ReadExec {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			dirs = append(dirs, p)
		default:
			files = append(files, p)
		}
	}
	if len(dirs) > 0 {
		out = append(out, landlock.RODirs(dirs...).IgnoreIfMissing())
	}
	if len(files) > 0 {
		out = append(out, landlock.ROFiles(files...).IgnoreIfMissing())
	}
	if len(s.ReadWrite) > 0 {
		out = append(out, landlock.RWDirs(s.ReadWrite...).WithResolveUnix())
	}
	return out
}

func restrict(s Spec) error {
	if s.Binary == "" {
		return fmt.Errorf("no provider binary named")
	}
	if err := config().Restrict(rules(s)...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}

func execFD(fd int, argv, env []string, hostPID int) error {
	// The host starts the trampoline with a parent-death signal, so that no
	// provider outlives a host killed outright. Linux keeps that signal per
	// thread, and an exec keeps only the exec'ing thread's, which is none on
	// any thread but the one the host started. Main runs on that one when it
	// is called from main; whatever thread this is, it gets the signal too,
	// and then the host is checked for, in case it died before that.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("set the parent-death signal: %w", err)
	}
	if os.Getppid() != hostPID {
		return errors.New("the host that started the provider is gone")
	}
	path := fmt.Sprintf("/proc/self/fd/%d", fd)
	// The descriptor was passed without close-on-exec (os/exec clears it on
	// ExtraFiles), so it survives this exec: a script's interpreter opens
	// the same path to read the script.
	err := syscall.Exec(path, argv, env)
	// Short: the host shows only the tail of this line, and its warning
	// already names the binary.
	return fmt.Errorf("execute the provider: %w", err)
}

// Probe says how providers will be confined on this machine: "landlock vN"
// with the ABI the kernel and the library agree on, or "none: <why>". It
// asks the kernel once; the trampoline's BestEffort restriction lands on the
// same version.
func Probe() (desc string, ok bool) {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		why := "the kernel has no Landlock"
		if err != nil {
			why += " (" + err.Error() + ")"
		}
		return "none: " + why, false
	}
	return fmt.Sprintf("landlock v%d", min(abi, 11)), true
}
