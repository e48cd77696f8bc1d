//go:build unix

package acpclient

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// exitStatusOf says how a reaped process ended, in the protocol's terms: an
// exit code, or the name of the signal that ended it.
func exitStatusOf(ps *os.ProcessState) *TerminalExitStatus {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		name := unix.SignalName(ws.Signal())
		if name == "" {
			name = ws.Signal().String()
		}
		return &TerminalExitStatus{Signal: &name}
	}
	code := ps.ExitCode()
	return &TerminalExitStatus{ExitCode: &code}
}
