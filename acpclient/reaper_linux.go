//go:build linux

package acpclient

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/acphost/acphost/internal/reaper"
)

// reaperLink is the app's end of a command run under its reaper, the
// per-command child subreaper of internal/reaper: this program run again.
type reaperLink struct {
	status *bufio.Reader // the helper's reports
	file   *os.File
	pid    int    // the command's
	reason string // why the helper could not contain the command; "" when it does
}

// underReaper makes cmd, a command not yet started, run under a reaper: cmd
// then starts the helper (path, or this program when ""), which starts the
// program with the same arguments, directory and environment, in a process
// group of its own. The helper gets a process group of its own too, and
// SIGTERM as its parent-death signal: it is its cue to end the tree.
func underReaper(cmd *exec.Cmd, path string) (*reaperLink, error) {
	if mode := buildMode(); mode == "c-shared" || mode == "c-archive" {
		// /proc/self/exe is then another program, which would not know
		// it is asked to be the reaper.
		return nil, fmt.Errorf("this program is a Go library (build mode %s) in a program that cannot run itself as the reaper", mode)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(slices.Clip(env), reaper.Env+"="+reaper.Value)
	cmd.Args = append([]string{reaper.Arg0, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/proc/self/exe" // this program, even if its file was replaced since
	if path != "" {
		cmd.Path = path
	}
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	return &reaperLink{status: bufio.NewReader(r), file: r}, nil
}

// buildMode is this program's -buildmode, "" when unknown (exe).
var buildMode = sync.OnceValue(func() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "-buildmode" {
				return s.Value
			}
		}
	}
	return ""
})

// started reads the helper's first reports, once it has been started: the
// command's pid, or why it could not be started. Its write end of the
// status pipe, held by cmd as an extra file, must have been closed.
func (l *reaperLink) started() error {
	for {
		line, err := l.status.ReadString('\n')
		if err != nil {
			return fmt.Errorf("the reaper ended without starting the command")
		}
		word, rest, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		switch word {
		case "pid":
			l.pid, err = strconv.Atoi(rest)
			return err
		case "uncontained":
			l.reason = rest
		case "error":
			num, msg, _ := strings.Cut(rest, " ")
			if errno, err := strconv.Atoi(num); err == nil && errno != 0 {
				return fmt.Errorf("%s: %w", strings.TrimSpace(msg), syscall.Errno(errno))
			}
			return fmt.Errorf("%s", msg)
		}
	}
}

// finish reads the command's wait status, once the helper has exited; nil
// if the helper died without reporting it.
func (l *reaperLink) finish() *TerminalExitStatus {
	defer l.file.Close()
	for {
		line, err := l.status.ReadString('\n')
		if err != nil {
			return nil
		}
		if w, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "status "); ok {
			n, err := strconv.ParseUint(w, 10, 32)
			if err != nil {
				return nil
			}
			return waitStatusOf(syscall.WaitStatus(n))
		}
	}
}

// kill tells the helper, not yet reaped (so its pid is still ours), to
// end the command and its tree.
func (l *reaperLink) kill(helper *exec.Cmd) { _ = helper.Process.Signal(syscall.SIGTERM) }

// close frees the link of a helper that never ran.
func (l *reaperLink) close() { l.file.Close() }

// noReaperReason is why a command runs without a reaper when none could be
// started.
func noReaperReason(err error) string {
	return fmt.Sprintf("the reaper could not be started (%v): descendants that leave the command's process group are recorded once a second, and one orphaned between two records survives", err)
}

// waitStatusOf is exitStatusOf for a raw wait status.
func waitStatusOf(ws syscall.WaitStatus) *TerminalExitStatus {
	if ws.Signaled() {
		name := unix.SignalName(ws.Signal())
		if name == "" {
			name = ws.Signal().String()
		}
		return &TerminalExitStatus{Signal: &name}
	}
	code := ws.ExitStatus()
	return &TerminalExitStatus{ExitCode: &code}
}

// haveReaper says that commands and agents run under a reaper here, so
// running without one is worth a warning.
const haveReaper = true

// term sends SIGTERM to the command's process group, which the helper made
// its pid, so that it can stop on its own; the caller makes sure the
// helper has not been reaped.
func (l *reaperLink) term() { _ = syscall.Kill(-l.pid, syscall.SIGTERM) }

// exitError is the command's exit as os/exec words it ("exit status 3",
// "signal: killed"), from the status the helper reported once the helper
// has exited (helperErr is its own exit); nil for status 0.
func (l *reaperLink) exitError(helperErr error) error {
	st := l.finish()
	switch {
	case st == nil:
		return fmt.Errorf("its reaper ended without reporting its exit (%v)", helperErr)
	case st.Signal != nil:
		if sig := unix.SignalNum(*st.Signal); sig != 0 {
			return fmt.Errorf("signal: %v", sig)
		}
		return fmt.Errorf("signal: %s", *st.Signal)
	case *st.ExitCode != 0:
		return fmt.Errorf("exit status %d", *st.ExitCode)
	}
	return nil
}
