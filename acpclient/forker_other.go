//go:build !linux

package acpclient

import "os/exec"

// startProcess starts cmd. There is no parent-death signal on this
// platform: on Unix the agent's sentinel ends it with its group when the
// host dies without closing it, elsewhere it outlives such a host (see the
// package doc).
func startProcess(cmd *exec.Cmd) (reaped func(), err error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return func() {}, nil
}
