package acpclient

import (
	"context"
	"errors"
	"fmt"
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
//
// Start returns once the remote login shell has run the command's wrapper;
// a start that takes long is reported to Logger while it waits, and ends
// with ctx (see Connect).
func (t *SSHTransport) Start(ctx context.Context) (RunningCommand, error) {
	rc, err := t.prepareRemote(ctx, true, ErrProgramNotFound)
	if err != nil {
		return nil, err
	}
	client := rc.client
	host := client.RemoteAddr().String()
	words := &loginWords{}
	var c *remoteCommand
	var stderr io.Reader
	err = t.startPhase(ctx, phaseSession, host, words, func() (func(), error) {
		// A raw session channel rather than an ssh.Session: the exit
		// status must count when it arrives, and ssh.Session.Wait reports
		// it only once the channel closes, which a descendant holding the
		// output open can put off for ever.
		ch, reqs, err := client.OpenChannel("session", nil)
		if err != nil {
			return nil, fmt.Errorf("acpclient: ssh: opening a session on %s: %w", host, err)
		}
		cmd := &remoteCommand{ch: ch, drain: remoteExitDrain, exited: make(chan struct{}), said: make(chan struct{})}
		go cmd.watch(reqs)
		ok, err := ch.SendRequest("exec", true, ssh.Marshal(struct{ Command string }{rc.line}))
		if err == nil && !ok {
			err = errors.New("the server refused the command")
		}
		if err == nil {
			_, err = ch.Write(rc.preamble)
			if err != nil {
				err = fmt.Errorf("passing the environment: %w", err)
			}
		}
		if err != nil {
			cmd.hangup()
			return nil, fmt.Errorf("acpclient: ssh: starting %s on %s: %w", t.Path, host, err)
		}
		c, stderr = cmd, ch.Stderr()
		return cmd.hangup, nil
	})
	if err != nil {
		return nil, err
	}
	err = t.startPhase(ctx, phaseLogin, host, words, func() (func(), error) {
		_, rest := awaitWrapper(stderr, words)
		go readContainment(rest, &c.why, c.said) // the wrapper's own words, never the command's
		return nil, nil
	})
	if err != nil {
		c.hangup()
		return nil, err
	}
	return c, nil
}

// remoteCloseWait is how long the remote command gets to end after its
// stdin ended (Kill, Close) before the SSH channel is closed regardless.
const remoteCloseWait = 10 * time.Second

// remoteExitDrain is how long output is still read after the remote
// command's exit status has arrived, when something it left behind holds
// its output open; then the channel is closed and Read ends.
const remoteExitDrain = time.Second

// remoteCommand is the RunningCommand of SSHTransport.Start.
type remoteCommand struct {
	ch    ssh.Channel
	drain time.Duration

	exited    chan struct{}
	status    *TerminalExitStatus
	said      chan struct{} // closed once why is known
	why       string        // see Uncontained
	endOnce   sync.Once
	hangOnce  sync.Once
	killOnce  sync.Once
	closeOnce sync.Once
}

// Read reads the command's combined stdout and stderr; io.EOF once its
// output has ended, remoteExitDrain after its exit when something it left
// behind still holds the output open, or once the connection is gone.
func (c *remoteCommand) Read(b []byte) (int, error) { return c.ch.Read(b) }

// Exited is closed once the remote command has ended, or the connection
// carrying it is gone.
func (c *remoteCommand) Exited() <-chan struct{} { return c.exited }

// Wait waits for the command's end and says how it ended: its exit code,
// or the name of the signal that ended it ("SIGKILL"); neither when the
// connection was lost first. It returns when the exit status arrives, not
// when the output ends.
func (c *remoteCommand) Wait() *TerminalExitStatus {
	<-c.exited
	return c.status
}

// Uncontained says why the remote command's processes cannot all be
// accounted for, so that some it started may outlive it: "" when the
// remote reaper holds its tree (see SSHTransport), else why not (no
// python3 on the host, no child subreaper there). It waits until the host
// has said, which it does as the command starts, at the latest until the
// command's session has ended.
func (c *remoteCommand) Uncontained() string {
	<-c.said
	return c.why
}

// Kill ends the session's stdin, on which the remote wrapper kills the
// command's whole session (SIGKILL); it does not wait. If the command has
// not ended remoteCloseWait later, the channel is closed.
func (c *remoteCommand) Kill() error {
	c.killOnce.Do(func() {
		_ = c.ch.CloseWrite()
		time.AfterFunc(remoteCloseWait, c.hangup)
	})
	return nil
}

// Close kills the command if it runs and waits until it has ended, closing
// the channel if the host does not answer in time; Read then returns
// io.EOF. It returns within twice remoteCloseWait whatever the host does.
func (c *remoteCommand) Close() error {
	c.closeOnce.Do(func() {
		if !stopRemote(c.exited, remoteCloseWait, c.Kill, c.hangup) {
			c.end(&TerminalExitStatus{}) // the host never answered
		}
	})
	return nil
}

// watch serves the channel's requests: the exit status (or signal) ends
// the command; the end of the requests, a lost channel, ends it unknown.
func (c *remoteCommand) watch(reqs <-chan *ssh.Request) {
	for req := range reqs {
		if st := requestExitStatus(req); st != nil {
			c.end(st)
		}
		if req.WantReply {
			_ = req.Reply(false, nil)
		}
	}
	c.end(&TerminalExitStatus{})
}

// end records how the command ended, once, and bounds the reading of
// what it left behind.
func (c *remoteCommand) end(st *TerminalExitStatus) {
	c.endOnce.Do(func() {
		c.status = st
		close(c.exited)
		time.AfterFunc(c.drain, c.hangup)
	})
}

// stopRemote is the one stop of a command under the remote wrapper, an
// agent's or a terminal's: the end of its input tells the wrapper to stop
// it (see SSHTransport); after grace the connection to it is hung up,
// which the wrapper also takes as the cue to end the tree. It reports
// whether the command ended within grace after that.
func stopRemote(exited <-chan struct{}, grace time.Duration, closeInput func() error, hangup func()) bool {
	_ = closeInput()
	waitFor(exited, grace)
	hangup()
	return waitFor(exited, grace)
}

// hangup closes the channel, once: the host answers by closing its end,
// which ends Read and the requests.
func (c *remoteCommand) hangup() { c.hangOnce.Do(func() { _ = c.ch.Close() }) }

// requestExitStatus is the status an exit-status or exit-signal request
// carries (RFC 4254, 6.10), or nil for any other request.
func requestExitStatus(req *ssh.Request) *TerminalExitStatus {
	switch req.Type {
	case "exit-status":
		var p struct{ Status uint32 }
		if ssh.Unmarshal(req.Payload, &p) != nil {
			return &TerminalExitStatus{}
		}
		code := int(p.Status)
		return &TerminalExitStatus{ExitCode: &code}
	case "exit-signal":
		var p struct {
			Signal     string
			CoreDumped bool
			Error      string
			Lang       string
		}
		if ssh.Unmarshal(req.Payload, &p) != nil {
			return &TerminalExitStatus{}
		}
		name := "SIG" + p.Signal
		return &TerminalExitStatus{Signal: &name}
	}
	return nil
}
