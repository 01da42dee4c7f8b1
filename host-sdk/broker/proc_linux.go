package broker

import (
	"os/exec"
	"syscall"
)

// tieToHost makes the kernel kill the provider if the host dies without
// cleaning up (SIGKILL, crash), so no provider outlives its host. The signal
// reaches the provider only; what the provider started is in its process
// group, which the broker kills on every other path.
func tieToHost(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// trampolined says the provider starts through the sandbox trampoline,
// which executes the open, verified binary through /proc/self/fd.
const trampolined = true
