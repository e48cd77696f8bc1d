//go:build unix

package acpclient

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the agent in a process group of its own, so that a
// signal to the group reaches everything it started and nothing of ours.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// setOwnSession puts a helper in a session of its own, which is also a
// process group of its own (see CommandTransport.OwnSession).
func setOwnSession(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// killGroup signals the agent's process group: SIGKILL when hard, else
// SIGTERM.
func killGroup(cmd *exec.Cmd, hard bool) {
	if cmd.Process == nil {
		return
	}
	sig := syscall.SIGTERM
	if hard {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
