package broker

import (
	"os/exec"
	"syscall"
)

// tieToHost makes the kernel kill the provider if the host dies without
// cleaning up (SIGKILL, crash), so no provider outlives its host.
func tieToHost(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
