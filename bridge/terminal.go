package bridge

import (
	"context"
	"path"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge/terminal"
)

// terminalServer serves terminal/* for one agent process; withTerminals
// adds it to the process's client only when the app enables terminals, so
// the capability is advertised exactly then.
type terminalServer struct{ c *agentClient }

// CreateTerminal starts the agent's command, if the session's policy
// allows commands (Build, Full) and its cwd lies inside the session's
// roots: -32602 (invalid params) for a cwd that is not absolute, not a
// directory or outside the roots, -32603 for a refusal by the session's
// policy, with a message that says why; the other errors are
// terminal.Set.Create's.
func (ts *terminalServer) CreateTerminal(ctx context.Context, req *acpclient.CreateTerminalRequest) (*acpclient.CreateTerminalResponse, error) {
	b := ts.c.b
	s := b.session(req.SessionID)
	if s == nil {
		return nil, acpclient.NewError(acpclient.CodeInvalidParams, "unknown session %q", req.SessionID)
	}
	s.activity()
	if why := s.Policy().writeRefusal(); why != "" {
		// The write rule: a command can change any file.
		return nil, acpclient.NewError(acpclient.CodeInternalError, "running %s refused: the session is read-only (%s), and a command could change files", req.Command, why)
	}
	runner := b.terminalRunner()
	dir := func(ctx context.Context) (string, error) { return terminalDir(ctx, s, runner, req.Cwd) }
	return b.terminals.Create(ctx, termOwner{s, ts.c}, b.cfg.Terminals, runner, req, dir)
}

// StartTerminal serves terminal/create from a goroutine of the bridge's
// terminal set (acpclient.TerminalStarter): starting a command on an SSH
// host takes round trips, which must not hold up the agent's connection.
func (ts *terminalServer) StartTerminal(ctx context.Context, req *acpclient.CreateTerminalRequest, reply func(*acpclient.CreateTerminalResponse, error)) {
	err := ts.c.b.terminals.Go(func() { reply(ts.CreateTerminal(ctx, req)) })
	if err != nil {
		reply(nil, acpclient.NewError(acpclient.CodeInternalError, "running %s: %v", req.Command, err))
	}
}

// TerminalOutput answers with the output kept so far, and the exit status
// once the command has ended.
func (ts *terminalServer) TerminalOutput(ctx context.Context, req *acpclient.TerminalRequest) (*acpclient.TerminalOutputResponse, error) {
	return ts.c.b.terminals.Output(ts.owner(req), req)
}

// WaitForTerminalExit answers once the command has ended; it does not hold
// up the connection meanwhile.
func (ts *terminalServer) WaitForTerminalExit(ctx context.Context, req *acpclient.TerminalRequest, reply func(*acpclient.TerminalExitStatus, error)) {
	ts.c.b.terminals.Wait(ctx, ts.owner(req), req, reply)
}

// KillTerminal ends the command and its process group; the terminal stays,
// with its output and exit status, until released.
func (ts *terminalServer) KillTerminal(ctx context.Context, req *acpclient.TerminalRequest) error {
	return ts.c.b.terminals.Kill(ts.owner(req), req)
}

// ReleaseTerminal ends the command if it runs and forgets the terminal:
// later calls with its id fail.
func (ts *terminalServer) ReleaseTerminal(ctx context.Context, req *acpclient.TerminalRequest) error {
	return ts.c.b.terminals.Release(ts.owner(req), req)
}

// owner is the owner a request of this agent process names: its terminals
// in the session it names (none, when the session is unknown).
func (ts *terminalServer) owner(req *acpclient.TerminalRequest) termOwner {
	return termOwner{ts.c.b.session(req.SessionID), ts.c}
}

// termOwner is a terminal's session and the agent process that created
// it: what the bridge's terminal set reports to, and compares (==) to
// answer a process only about its own terminals.
type termOwner struct {
	s *Session
	c *agentClient
}

// Refuse refuses a command that comes too late: its session closing, its
// process gone.
func (o termOwner) Refuse() error {
	if err := o.s.closedErr(); err != nil {
		return err
	}
	if o.c.conn != nil && o.c.conn.Err() != nil {
		return errAgentExited
	}
	return nil
}

// Printed: work done, so a failed turn must not be sent again whole.
func (o termOwner) Printed() { o.s.turnOutput() }

// Row is the tool call whose row shows terminal id (see terminalrows.go).
func (o termOwner) Row(id string) string { return o.s.terminalRow(id) }

// Emit reports a piece of output; a command's output is the agent's turn
// at work, for the watchdog.
func (o termOwner) Emit(out *terminal.Output) {
	o.s.activity()
	o.s.emit(Event{Kind: KindTerminal, Terminal: out})
}

// AfterFunc runs f on the bridge's clock.
func (o termOwner) AfterFunc(d time.Duration, f func()) func() bool {
	return o.s.b.clock.AfterFunc(d, f).Stop
}

// ofSession selects the terminals of session s.
func ofSession(s *Session) func(terminal.Owner) bool {
	return func(o terminal.Owner) bool { return o.(termOwner).s == s }
}

// ofConn selects the terminals of an agent process.
func ofConn(conn *acpclient.Conn) func(terminal.Owner) bool {
	return func(o terminal.Owner) bool { return o.(termOwner).c.conn == conn }
}

// terminalRunner is the runner of the bridge's terminals: the app's, or
// one where the agent runs (terminal.SSH for an agent on an SSH host,
// terminal.Local otherwise). SSH runners, the app's too, share the set's
// SFTP client and log to the bridge's logger unless they name one.
func (b *Bridge) terminalRunner() terminal.Runner {
	r := b.cfg.Terminals.Runner
	if r == nil {
		r = terminal.Local{}
		if ssh := sshTransportOf(b.transport()); ssh != nil {
			r = terminal.SSH{Dial: ssh.SSHClient}
		}
	}
	if st, ok := r.(terminal.SSH); ok && st.Logger == nil {
		st.Logger = b.logger
		r = st
	}
	return b.terminals.Runner(r)
}

// sshTransportOf is the SSH transport that starts the agent, if it is one
// (possibly inside a profile's transport).
func sshTransportOf(tr acpclient.Transport) *acpclient.SSHTransport {
	switch t := tr.(type) {
	case *acpclient.SSHTransport:
		return t
	case *profileTransport:
		return sshTransportOf(t.inner)
	}
	return nil
}

// terminalDir returns the terminal's working directory, symlinks
// resolved: cwd (default: the session's), which must lie inside the
// session's cwd or one of its external directories. A cwd that is not even
// lexically inside a root is refused before anything is looked up, so a
// refusal reveals nothing about what exists outside.
func terminalDir(ctx context.Context, s *Session, runner terminal.Runner, cwd string) (string, error) {
	if cwd == "" {
		cwd = s.cfg.Cwd
	}
	if !path.IsAbs(cwd) {
		return "", acpclient.NewError(acpclient.CodeInvalidParams, "terminal cwd %q is not an absolute path", cwd)
	}
	cwd = path.Clean(cwd)
	roots := terminalRoots(ctx, s, runner)
	if !insideAny(cwd, roots) {
		return "", errOutsideRoots(cwd)
	}
	resolved, err := runner.ResolveDir(ctx, cwd)
	if err != nil {
		return "", acpclient.NewError(acpclient.CodeInvalidParams, "terminal cwd %s: %v", cwd, err)
	}
	for _, r := range roots {
		if r.resolved != "" && insideDir(resolved, r.resolved) {
			return resolved, nil
		}
	}
	return "", errOutsideRoots(cwd)
}

// terminalRoot is a directory a terminal may run in, as given and with its
// symlinks resolved ("" when it cannot be).
type terminalRoot struct{ given, resolved string }

func terminalRoots(ctx context.Context, s *Session, runner terminal.Runner) []terminalRoot {
	var roots []terminalRoot
	for _, dir := range append([]string{s.cfg.Cwd}, s.Grants()...) {
		if !path.IsAbs(dir) {
			continue
		}
		resolved, _ := runner.ResolveDir(ctx, dir)
		roots = append(roots, terminalRoot{given: path.Clean(dir), resolved: resolved})
	}
	return roots
}

func insideAny(p string, roots []terminalRoot) bool {
	for _, r := range roots {
		if insideDir(p, r.given) || r.resolved != "" && insideDir(p, r.resolved) {
			return true
		}
	}
	return false
}

// insideDir reports whether p is dir or lies below it (both clean).
func insideDir(p, dir string) bool {
	return dir == "/" || p == dir || len(p) > len(dir) && p[:len(dir)] == dir && p[len(dir)] == '/'
}

func errOutsideRoots(cwd string) error {
	return acpclient.NewError(acpclient.CodeInvalidParams, "terminal cwd %s refused: outside the session's directories", cwd)
}
