//go:build !linux

package acpclient

import (
	"errors"
	"os/exec"
	"runtime"
)

// reaperLink is unused here: there is no child subreaper outside Linux.
type reaperLink struct {
	pid    int
	reason string
}

// underReaper declines: there is no child subreaper on this platform.
func underReaper(*exec.Cmd, string) (*reaperLink, error) {
	return nil, errors.New("no child subreaper on " + runtime.GOOS)
}

func (*reaperLink) started() error              { return nil }
func (*reaperLink) finish() *TerminalExitStatus { return nil }
func (*reaperLink) close()                      {}
func (*reaperLink) kill(*exec.Cmd)              {}
func (*reaperLink) term()                       {}
func (*reaperLink) exitError(err error) error   { return err }

// haveReaper: none here, so running without one is the rule, not news.
const haveReaper = false

func noReaperReason(error) string {
	return "on " + runtime.GOOS + " descendants that leave the command's process group (setsid, a daemon) are not tracked and survive it"
}
