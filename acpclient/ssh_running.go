package acpclient

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// Start runs the program on the remote host as a long-running command whose
// output is read while it runs, such as a terminal an agent asked for: the
// remote counterpart of CommandTransport.Start. It runs under the agents'
// wrapper (see SSHTransport) in its terminal mode: stdin is empty (/dev/null
// remotely), stdout and stderr are joined on the remote side, so Read
// returns them in the order written, and the end of the SSH session's stdin
// (Kill, Close, a dropped connection) kills the command's session there at
// once with SIGKILL. Path and Args are quoted as for Connect; Dir, Env and
// KeepEnv apply; StopTimeout, KillTimeout, StderrBytes and Logger do not.
//
// A program that cannot be run ends with exit code 127 or 126 and the
// shell's message as output. As a shell sees it, a command that exits with
// a status above 128 is reported as killed by the signal of that number.
func (t *SSHTransport) Start(ctx context.Context) (*RemoteCommand, error) {
	r, err := t.startRemote(ctx, true)
	if err != nil {
		return nil, err
	}
	go func() { _, _ = io.Copy(io.Discard, r.stderr) }() // empty: joined into stdout
	c := &RemoteCommand{sess: r.sess, stdin: r.stdin, stdout: r.stdout, exited: make(chan struct{})}
	go func() {
		c.status = remoteExitStatus(r.sess.Wait())
		close(c.exited)
	}()
	return c, nil
}

// remoteCloseWait is how long Close waits for the remote command to end
// after its stdin ended before it closes the SSH session regardless.
const remoteCloseWait = 10 * time.Second

// RemoteCommand is a command started by SSHTransport.Start. Read reads its
// output; Wait, Kill and Close may be called from any goroutine, also while
// another reads.
type RemoteCommand struct {
	sess   *ssh.Session
	stdin  io.WriteCloser
	stdout io.Reader

	exited    chan struct{}
	status    *TerminalExitStatus
	killOnce  sync.Once
	closeOnce sync.Once
}

// Read reads the command's combined stdout and stderr; io.EOF once the
// remote command has ended and its output is read, or the connection is
// gone.
func (c *RemoteCommand) Read(b []byte) (int, error) { return c.stdout.Read(b) }

// Exited is closed once the remote command has ended, or the connection
// carrying it is gone.
func (c *RemoteCommand) Exited() <-chan struct{} { return c.exited }

// Wait waits for the command's end and says how it ended: its exit code,
// or the name of the signal that ended it ("SIGKILL"); neither when the
// connection was lost first.
func (c *RemoteCommand) Wait() *TerminalExitStatus {
	<-c.exited
	return c.status
}

// Kill ends the session's stdin, on which the remote wrapper kills the
// command's whole session (SIGKILL); it does not wait.
func (c *RemoteCommand) Kill() error {
	c.killOnce.Do(func() { _ = c.stdin.Close() })
	return nil
}

// Close kills the command if it runs and waits until it has ended (closing
// the SSH session if the host does not answer in time); Read then returns
// io.EOF.
func (c *RemoteCommand) Close() error {
	c.closeOnce.Do(func() {
		c.Kill()
		if !waitFor(c.exited, remoteCloseWait) {
			_ = c.sess.Close()
		}
		<-c.exited
		_ = c.sess.Close()
	})
	return nil
}

// remoteExitStatus turns an ssh.Session's Wait error into the protocol's
// exit status.
func remoteExitStatus(err error) *TerminalExitStatus {
	var exit *ssh.ExitError
	switch {
	case err == nil:
		code := 0
		return &TerminalExitStatus{ExitCode: &code}
	case errors.As(err, &exit) && exit.Signal() != "":
		name := "SIG" + exit.Signal()
		return &TerminalExitStatus{Signal: &name}
	case errors.As(err, &exit):
		code := exit.ExitStatus()
		return &TerminalExitStatus{ExitCode: &code}
	default: // the connection ended before the command did
		return &TerminalExitStatus{}
	}
}
