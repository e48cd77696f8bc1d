package acpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Start runs the program as a long-running command whose output is read
// while it runs, such as a terminal an agent asked for. Stdout and stderr
// are one pipe (one pseudo-terminal with PTY), so Read returns them in the
// order the command wrote them; stdin is empty. The command gets its own
// process group, on Linux a parent-death signal, and ends with this process
// (a program that cannot be found is an error wrapping ErrProgramNotFound).
//
// When the command exits, whatever it left in its group is killed
// (SIGKILL), as for Output: a command's end is the end of its tree. On
// Linux the command runs under a reaper of its own (see the package doc),
// so that tree is every process the command started, also those that left
// its group and session (setsid, a daemon) and whose parents are gone, and
// it is ended when the command exits, is killed or closed, or this process
// dies. Elsewhere, or where the reaper cannot be started, Uncontained says
// why not all of them can be accounted for: the sentinel guards the group
// and, on Linux, descendants are recorded as an agent's are (see
// DescendantScan). Path is resolved as for Connect; Dir, Env, ExitDrain and
// PTY apply, NoSentinel and DescendantScan only without a reaper, the other
// fields do not. ctx bounds nothing once the command
// runs: Kill and Close end it.
func (t *CommandTransport) Start(ctx context.Context) (RunningCommand, error) {
	path, err := t.resolveAs(ErrProgramNotFound)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("acpclient: starting %s: %w", path, err)
	}
	cmd := exec.Command(path, t.Args...)
	cmd.Dir, cmd.Env = t.Dir, t.Env
	setProcessGroup(cmd)
	var link *reaperLink
	uncontained := ""
	if t.noReaper {
		uncontained = noReaperReason(errors.New("turned off"))
	} else if link, err = underReaper(cmd, t.reaperPath); err != nil {
		uncontained = noReaperReason(err)
	}
	outR, outW, err := t.outputPipe()
	if err != nil {
		if link != nil {
			link.close()
		}
		return nil, fmt.Errorf("acpclient: starting %s: %w", path, err)
	}
	cmd.Stdout, cmd.Stderr = outW, outW
	reaped, err := startProcess(cmd)
	outW.Close()
	if link != nil && err != nil {
		// This program could not be run again as the reaper (a mount
		// without exec, a sandbox): the command runs without one.
		closeAll(cmd.ExtraFiles...)
		link.close()
		outR.Close()
		plain := *t
		plain.noReaper = true
		c, perr := plain.Start(ctx)
		if perr != nil {
			return nil, perr
		}
		c.(*localCommand).uncontained = noReaperReason(err)
		return c, nil
	}
	if link != nil {
		closeAll(cmd.ExtraFiles...) // the helper's end of its status pipe
		if err == nil {
			if err = link.started(); err != nil {
				_ = cmd.Wait()
				reaped()
			}
		}
		if err != nil {
			link.close()
		}
	}
	if err != nil {
		outR.Close()
		return nil, fmt.Errorf("acpclient: starting %s: %w", path, err)
	}
	c := &localCommand{stop: stopCore{cmd: cmd, reaped: reaped}, pid: cmd.Process.Pid, out: outR, pty: t.PTY,
		drain: orDefault(t.ExitDrain, defaultExitDrain), exited: make(chan struct{}), uncontained: uncontained}
	if link != nil {
		c.stop.link, c.pid, c.uncontained = link, link.pid, link.reason
	} else {
		c.stop.guard = t.startSentinel(cmd.Process.Pid)
		c.stop.tree = newDescendants(cmd.Process.Pid, scanInterval(t.DescendantScan), c.exited)
	}
	go c.reap()
	return c, nil
}

// RunningCommand is a command started by CommandTransport.Start or
// SSHTransport.Start: one type for both, so that a terminal reads, waits
// for and ends a command the same way wherever it runs. Read reads its
// output; Wait, Kill and Close may be called from any goroutine, also
// while another reads.
type RunningCommand interface {
	// Read reads the command's combined stdout and stderr. It returns
	// io.EOF once its output has ended, or after Close; ExitDrain after
	// the command's exit (SSH: after a bounded wait) when something the
	// command left behind still holds the output open.
	io.Reader
	// Exited is closed once the command has exited (and locally been
	// reaped), or its connection is gone.
	Exited() <-chan struct{}
	// Wait waits for the command to exit and says how it ended: its exit
	// code or the name of the signal that ended it; neither when the
	// connection was lost first.
	Wait() *TerminalExitStatus
	// Kill ends the command and everything it started; it does not wait.
	Kill() error
	// Close kills the command if it runs and waits until it has ended;
	// Read then returns io.EOF.
	Close() error
	// Uncontained says why the command's processes cannot all be
	// accounted for, so that some it started may outlive it (no child
	// subreaper where it runs); "" when they can (see the package doc).
	Uncontained() string
}

// localCommand is the RunningCommand of CommandTransport.Start.
type localCommand struct {
	stop stopCore
	pid  int // the command's
	// uncontained says why the command's processes cannot all be
	// accounted for; "" when its reaper holds them.
	uncontained string
	out         *os.File
	pty         bool // out is a pseudo-terminal's master
	drain       time.Duration
	// leftover counts the bytes read after the exit drain; only Read uses it.
	leftover int

	status *TerminalExitStatus
	exited chan struct{}
	closed sync.Once
}

// Uncontained says why the command's processes cannot all be accounted
// for, so that some it started may outlive it (no child subreaper on this
// platform, or none could be started); "" when they can: on Linux every
// process the command starts is ended with it (see the package doc).
func (c *localCommand) Uncontained() string { return c.uncontained }

// Read reads the command's combined stdout and stderr. It returns io.EOF
// once every writer of the pipe is gone, or ExitDrain after the command's
// exit when something that left its group still holds the pipe (what the
// pipe holds then is still read, up to maxLeftoverBytes), or after Close.
func (c *localCommand) Read(b []byte) (int, error) {
	n, err := c.out.Read(b)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return readLeftover(c.out, b, &c.leftover, maxLeftoverBytes)
	}
	if errors.Is(err, os.ErrClosed) || c.pty && ptyEnded(err) {
		err = io.EOF
	}
	return n, err
}

// Exited is closed once the command has exited and been reaped.
func (c *localCommand) Exited() <-chan struct{} { return c.exited }

// Wait waits for the command to exit and says how it ended: its exit code,
// or the name of the signal that killed it ("SIGKILL").
func (c *localCommand) Wait() *TerminalExitStatus {
	<-c.exited
	return c.status
}

// Kill ends the command and its tree: under a reaper, it tells the reaper
// to kill the command and every process it started; without one, it sends
// SIGKILL to the command's process group, and descendants recorded outside
// it are ended once the command has been reaped. It does not wait. Once
// the command has been reaped Kill does nothing (its tree was ended then).
func (c *localCommand) Kill() error {
	c.stop.signal(true)
	return nil
}

// Close kills the command if it runs, waits until it has been reaped, and
// closes its output: Read then returns io.EOF.
func (c *localCommand) Close() error {
	c.Kill()
	<-c.exited
	c.closed.Do(func() { c.out.Close() })
	return nil
}

// reap waits for the command, ends what is left in its group (see
// stopCore.reap) and the descendants recorded outside it, and bounds how
// long the output is read after the exit.
func (c *localCommand) reap() {
	_ = c.stop.reap()
	c.stop.endTree()
	c.status = exitStatusOf(c.stop.cmd.ProcessState)
	if c.stop.link != nil {
		if st := c.stop.link.finish(); st != nil {
			c.status = st
		}
	}
	_ = c.out.SetReadDeadline(time.Now().Add(c.drain))
	close(c.exited)
}
