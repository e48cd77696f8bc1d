//go:build !unix

package acpclient

import "os"

// exitStatusOf says how a reaped process ended: its exit code (there are
// no signals here).
func exitStatusOf(ps *os.ProcessState) *TerminalExitStatus {
	code := ps.ExitCode()
	return &TerminalExitStatus{ExitCode: &code}
}
