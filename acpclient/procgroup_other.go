//go:build !unix

package acpclient

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

func setOwnSession(*exec.Cmd) {}

// killGroup kills the agent process; without process groups its children
// are not reached.
func killGroup(cmd *exec.Cmd, hard bool) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
