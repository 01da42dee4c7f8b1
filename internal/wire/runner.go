package wire

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin/runner"
)

// pipeGrace is how long the provider's stdout and stderr may stay open after
// its process group was killed. Only a process that left the group (setsid)
// can still hold them then; past the grace the host closes its ends rather
// than wait for that process.
const pipeGrace = 500 * time.Millisecond

// killWait bounds go-plugin's own cleanup after the process group is dead.
const killWait = 3 * time.Second

// procRunner runs a provider for go-plugin. Unlike go-plugin's own runner it
// puts the provider in a process group of its own, kills the whole group,
// and owns its end of the stdout and stderr pipes, so no wait depends on a
// process the provider started: go-plugin reads the pipes until EOF before it
// waits for the process, and a child that inherited them (a wrapper script
// that does not exec) would otherwise keep that EOF from coming forever.
type procRunner struct {
	cmd            *exec.Cmd
	stdout, stderr *os.File // the host's read ends
	childOut       *os.File // the provider's write ends, closed once it started
	childErr       *os.File
	closeOnce      sync.Once
	killOnce       sync.Once

	mu     sync.Mutex // guards proc and killed: Kill may come from another goroutine mid-Start
	proc   *os.Process
	pid    int
	killed bool
}

var _ runner.Runner = (*procRunner)(nil)

func newProcRunner(cmd *exec.Cmd) (*procRunner, error) {
	if cmd.Stdout != nil || cmd.Stderr != nil {
		return nil, fmt.Errorf("the provider command's stdout and stderr must be unset")
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	ownGroup(cmd)
	return &procRunner{cmd: cmd, stdout: outR, stderr: errR, childOut: outW, childErr: errW}, nil
}

func (r *procRunner) Start(context.Context) error {
	err := r.cmd.Start()
	// The provider holds its own copies now; ours would keep EOF from coming.
	r.childOut.Close()
	r.childErr.Close()
	if err != nil {
		r.closePipes()
		return err
	}
	r.mu.Lock()
	r.proc, r.pid = r.cmd.Process, r.cmd.Process.Pid
	killed := r.killed
	r.mu.Unlock()
	if killed {
		// Kill came while the process was being started.
		killGroup(r.proc)
	}
	return nil
}

// Wait waits for the provider process only: its stdout and stderr are plain
// files, so there is no copying goroutine for a stray child to hold up.
func (r *procRunner) Wait(context.Context) error {
	r.mu.Lock()
	started := r.proc != nil
	r.mu.Unlock()
	if !started {
		return nil
	}
	return r.cmd.Wait()
}

// Kill kills the provider's whole process group, then gives the pipes a
// short grace to drain before closing the host's ends of them.
func (r *procRunner) Kill(context.Context) error {
	r.killOnce.Do(func() {
		r.mu.Lock()
		r.killed = true
		p := r.proc
		r.mu.Unlock()
		if p != nil {
			killGroup(p)
		}
		time.AfterFunc(pipeGrace, r.closePipes)
	})
	return nil
}

func (r *procRunner) closePipes() {
	r.closeOnce.Do(func() {
		r.stdout.Close()
		r.stderr.Close()
	})
}

func (r *procRunner) Stdout() io.ReadCloser { return r.stdout }
func (r *procRunner) Stderr() io.ReadCloser { return r.stderr }
func (r *procRunner) Name() string          { return r.cmd.Path }
func (r *procRunner) ID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pid == 0 {
		return ""
	}
	return fmt.Sprint(r.pid)
}
func (r *procRunner) Diagnose(context.Context) string { return "" }

func (r *procRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

func (r *procRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}
