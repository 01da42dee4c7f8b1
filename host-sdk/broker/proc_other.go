//go:build !linux

package broker

import "os/exec"

// tieToHost has no portable equivalent of Linux's parent-death signal; the
// broker's Kill on every path is what keeps providers from outliving the host.
func tieToHost(*exec.Cmd) {}

// trampolined is false where there is no /proc/self/fd to execute an open
// file through: the provider is started by its path.
const trampolined = false
