//go:build unix

package wire

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup starts the provider as the leader of a new process group, so
// everything it starts (unless it leaves the group on purpose) dies with it.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
}

// killGroup kills the provider's process group, the provider included.
func killGroup(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	_ = p.Kill()
}
