//go:build !unix

package wire

import (
	"os"
	"os/exec"
)

// ownGroup has no portable equivalent; the provider alone is killed.
func ownGroup(*exec.Cmd) {}

func killGroup(p *os.Process) { _ = p.Kill() }
