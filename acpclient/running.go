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
// order the command wrote them; stdin is empty. The command gets the
// guarantees an agent gets (a program that cannot be found is an error
// wrapping ErrProgramNotFound): its own process group, on Linux a parent-death
// signal, on Unix a sentinel that kills the group if this process dies
// (unless NoSentinel).
//
// When the command exits, whatever it left in its group is killed
// (SIGKILL), as for Output: a command's end is the end of its tree. On
// Linux that tree includes the descendants that left the group (setsid, a
// daemon), recorded as for an agent (see DescendantScan) and killed when
// the command is killed or exits. Path is resolved as for Connect; Dir,
// Env, NoSentinel, ExitDrain, DescendantScan and PTY apply, the other
// fields do not. ctx bounds nothing once the command runs: Kill
// and Close end it.
func (t *CommandTransport) Start(ctx context.Context) (*RunningCommand, error) {
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
	outR, outW, err := t.outputPipe()
	if err != nil {
		return nil, fmt.Errorf("acpclient: starting %s: %w", path, err)
	}
	cmd.Stdout, cmd.Stderr = outW, outW
	reaped, err := startProcess(cmd)
	outW.Close()
	if err != nil {
		outR.Close()
		return nil, fmt.Errorf("acpclient: starting %s: %w", path, err)
	}
	c := &RunningCommand{cmd: cmd, reaped: reaped, out: outR, pty: t.PTY,
		drain: orDefault(t.ExitDrain, DefaultExitDrain), exited: make(chan struct{})}
	c.guard = t.startSentinel(cmd.Process.Pid)
	c.tree = newDescendants(cmd.Process.Pid, scanInterval(t.DescendantScan), c.exited)
	go c.reap()
	return c, nil
}

// RunningCommand is a command started by CommandTransport.Start. Read
// reads its output; Wait, Kill and Close may be called from any goroutine,
// also while another reads.
type RunningCommand struct {
	cmd    *exec.Cmd
	reaped func()
	guard  *sentinel // nil without one
	tree   *descendants
	out    *os.File
	pty    bool // out is a pseudo-terminal's master
	drain  time.Duration
	// leftover counts the bytes read after the exit drain; only Read uses it.
	leftover int

	mu     sync.Mutex // orders Kill against the reap
	done   bool       // the leader has been reaped (and its group ended)
	status *TerminalExitStatus
	exited chan struct{}
	closed sync.Once
}

// Pid returns the process id (also its process group id).
func (c *RunningCommand) Pid() int { return c.cmd.Process.Pid }

// Read reads the command's combined stdout and stderr. It returns io.EOF
// once every writer of the pipe is gone, or ExitDrain after the command's
// exit when something that left its group still holds the pipe (what the
// pipe holds then is still read, up to maxLeftoverBytes), or after Close.
func (c *RunningCommand) Read(b []byte) (int, error) {
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
func (c *RunningCommand) Exited() <-chan struct{} { return c.exited }

// Wait waits for the command to exit and says how it ended: its exit code,
// or the name of the signal that killed it ("SIGKILL").
func (c *RunningCommand) Wait() *TerminalExitStatus {
	<-c.exited
	return c.status
}

// Kill sends SIGKILL to the command's process group, so its children die
// with it; it does not wait. Descendants that left the group are ended
// once the command has been reaped. Once it has been reaped Kill does
// nothing (its group and descendants were ended then).
func (c *RunningCommand) Kill() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done {
		// Record the tree while the command still links it: once it is
		// killed, its children are re-parented and no longer found.
		c.tree.sample()
		killGroup(c.cmd, true) // unreaped leader: the group id is still ours
	}
	return nil
}

// Close kills the command if it runs, waits until it has been reaped, and
// closes its output: Read then returns io.EOF.
func (c *RunningCommand) Close() error {
	c.Kill()
	<-c.exited
	c.closed.Do(func() { c.out.Close() })
	return nil
}

// reap waits for the command, ends what is left in its group (pinned by
// the sentinel, so the id cannot have been reused) and the descendants
// recorded outside it, stops the sentinel and bounds how long the output
// is read after the exit.
func (c *RunningCommand) reap() {
	_ = c.cmd.Wait()
	c.reaped()
	c.mu.Lock()
	c.done = true
	if c.guard != nil {
		killGroup(c.cmd, true)
	}
	c.mu.Unlock()
	c.tree.end()
	c.guard.stop()
	c.status = exitStatusOf(c.cmd.ProcessState)
	_ = c.out.SetReadDeadline(time.Now().Add(c.drain))
	close(c.exited)
}
