package bridge

import (
	"context"
	"errors"
	"path"
	"strings"
	"time"

	"github.com/acphost/acphost/acpclient"
)

// TerminalOptions turns on the terminals a bridge serves to its agent
// (Config.Terminals): terminal/create, terminal/output,
// terminal/wait_for_exit, terminal/kill and terminal/release. The zero value
// takes the defaults.
type TerminalOptions struct {
	// OutputByteLimit is how much of a terminal's output is kept when the
	// agent sets no outputByteLimit (default DefaultTerminalOutputBytes).
	OutputByteLimit int
	// MaxOutputByteLimit caps the outputByteLimit an agent may ask for, so
	// an agent cannot make the host hold more (default
	// DefaultMaxTerminalOutputBytes).
	MaxOutputByteLimit int
	// PTY runs each command with a pseudo-terminal as its stdout and
	// stderr instead of a pipe, for apps that render a terminal emulator:
	// the command sees a terminal (isatty) and behaves as in one, and its
	// output is merged as a terminal shows it, with CR LF line ends (see
	// acpclient.CommandTransport.PTY). LocalTerminals honour it;
	// SSHTerminals run with pipes whatever it says.
	PTY bool
	// Runner starts the commands. Default: where the agent runs, as its
	// commands must run where its files are: SSHTerminals over the agent's
	// connection when its transport is an acpclient.SSHTransport (also
	// inside a profile's launch), LocalTerminals{} otherwise.
	Runner TerminalRunner
}

// Defaults of TerminalOptions.
const (
	DefaultTerminalOutputBytes    = 1 << 20
	DefaultMaxTerminalOutputBytes = 16 << 20
)

// liveTerminalPiece bounds the output one terminal event carries: a
// consumer that lags gets the newest output, marked Truncated, not a
// backlog (terminal/output still has the whole window).
const liveTerminalPiece = 16 << 10

// liveTerminalInterval is the least time between two terminal events of one
// terminal (the first goes out at once): enough for a view to look live.
const liveTerminalInterval = 25 * time.Millisecond

// limitFor is the output window for a request's outputByteLimit.
func (o *TerminalOptions) limitFor(asked *int64) (int, error) {
	limit := o.OutputByteLimit
	if limit <= 0 {
		limit = DefaultTerminalOutputBytes
	}
	maxLimit := o.MaxOutputByteLimit
	if maxLimit <= 0 {
		maxLimit = DefaultMaxTerminalOutputBytes
	}
	if asked != nil {
		if *asked < 0 {
			return 0, acpclient.NewError(acpclient.CodeInvalidParams, "terminal/create: outputByteLimit %d is negative", *asked)
		}
		limit = int(min(*asked, int64(maxLimit)))
	}
	return min(limit, maxLimit), nil
}

// terminalServer serves terminal/* for one agent process; withTerminals
// adds it to the process's client only when the app enables terminals, so
// the capability is advertised exactly then.
type terminalServer struct{ c *agentClient }

// withTerminals returns served with the terminal methods when the bridge
// has Config.Terminals.
func (b *Bridge) withTerminals(served acpclient.Client, client *agentClient) acpclient.Client {
	if b.cfg.Terminals == nil {
		return served
	}
	ts := &terminalServer{c: client}
	if e, ok := served.(*elicitingClient); ok {
		return struct {
			*elicitingClient
			*terminalServer
		}{e, ts}
	}
	return struct {
		*agentClient
		*terminalServer
	}{client, ts}
}

// CreateTerminal starts the agent's command, if the session's policy
// allows commands (Build, Full) and its cwd lies inside the session's
// roots. Its errors, by code: -32602 (invalid params) for a cwd that is
// not absolute, not a directory or outside the roots, a negative
// outputByteLimit, and an environment variable whose name is empty or
// holds '=' or NUL (or, on an SSH host, is not a shell name) or whose
// value holds NUL; -32002 (resource not found) for a program that cannot
// be found locally (an SSH host reports it as exit code 127 instead);
// -32603 for a refusal by the session's policy, with a message that says
// why, and for any other failure to start.
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
	if err := checkTerminalEnv(req.Env); err != nil {
		return nil, err
	}
	limit, err := b.cfg.Terminals.limitFor(req.OutputByteLimit)
	if err != nil {
		return nil, err
	}
	runner := b.terminalRunner()
	dir, err := s.terminalDir(ctx, runner, req.Cwd)
	if err != nil {
		return nil, err
	}
	proc, err := runner.StartTerminal(ctx, TerminalCommand{Command: req.Command, Args: req.Args, Env: req.Env, Dir: dir, PTY: b.cfg.Terminals.PTY})
	if err != nil {
		return nil, startError(req.Command, err)
	}
	id, err := b.terminals.add(s, ts.c, proc, limit)
	if err != nil {
		return nil, acpclient.NewError(acpclient.CodeInternalError, "running %s: %v", req.Command, err)
	}
	return &acpclient.CreateTerminalResponse{TerminalID: id}, nil
}

// checkTerminalEnv refuses the variables no runner can set: a name that is
// empty or holds '=' or NUL, a value that holds NUL.
func checkTerminalEnv(env []acpclient.EnvVariable) error {
	for _, v := range env {
		if v.Name == "" || strings.ContainsAny(v.Name, "=\x00") || strings.ContainsRune(v.Value, 0) {
			return acpclient.NewError(acpclient.CodeInvalidParams, "terminal/create: environment variable %q refused: a name must be non-empty without '=' or NUL, a value without NUL", v.Name)
		}
	}
	return nil
}

// startError is the answer to a command the runner could not start: the
// runner's own protocol error as it is, resource not found for a missing
// program, internal error otherwise.
func startError(command string, err error) error {
	var perr *acpclient.Error
	switch {
	case errors.As(err, &perr):
		return perr
	case errors.Is(err, acpclient.ErrProgramNotFound):
		return acpclient.NewError(acpclient.CodeResourceNotFound, "running %s: program not found: %v", command, err)
	}
	return acpclient.NewError(acpclient.CodeInternalError, "running %s: %v", command, err)
}

// StartTerminal serves terminal/create from a goroutine of the bridge's
// terminal set (acpclient.TerminalStarter): starting a command on an SSH
// host takes round trips, which must not hold up the agent's connection.
func (ts *terminalServer) StartTerminal(ctx context.Context, req *acpclient.CreateTerminalRequest, reply func(*acpclient.CreateTerminalResponse, error)) {
	err := ts.c.b.terminals.goWait(func() { reply(ts.CreateTerminal(ctx, req)) })
	if err != nil {
		reply(nil, acpclient.NewError(acpclient.CodeInternalError, "running %s: %v", req.Command, err))
	}
}

// TerminalOutput answers with the output kept so far, and the exit status
// once the command has ended.
func (ts *terminalServer) TerminalOutput(ctx context.Context, req *acpclient.TerminalRequest) (*acpclient.TerminalOutputResponse, error) {
	t, err := ts.c.b.terminals.lookup(ts.c, req)
	if err != nil {
		return nil, err
	}
	status := t.exitStatus()
	out, truncated := t.out.output(status != nil)
	return &acpclient.TerminalOutputResponse{Output: out, Truncated: truncated, ExitStatus: status}, nil
}

// WaitForTerminalExit answers once the command has ended; it does not hold
// up the connection meanwhile.
func (ts *terminalServer) WaitForTerminalExit(ctx context.Context, req *acpclient.TerminalRequest, reply func(*acpclient.TerminalExitStatus, error)) {
	set := &ts.c.b.terminals
	t, err := set.lookup(ts.c, req)
	if err != nil {
		reply(nil, err)
		return
	}
	if st := t.exitStatus(); st != nil {
		reply(st, nil)
		return
	}
	err = set.goWait(func() {
		select {
		case <-t.ended:
			reply(t.status, nil)
		case <-ctx.Done(): // the agent gave up, or the connection ended
			reply(nil, ctx.Err())
		}
	})
	if err != nil {
		reply(nil, err)
	}
}

// KillTerminal ends the command and its process group; the terminal stays,
// with its output and exit status, until released.
func (ts *terminalServer) KillTerminal(ctx context.Context, req *acpclient.TerminalRequest) error {
	t, err := ts.c.b.terminals.lookup(ts.c, req)
	if err != nil {
		return err
	}
	return t.proc.Kill()
}

// ReleaseTerminal ends the command if it runs and forgets the terminal:
// later calls with its id fail.
func (ts *terminalServer) ReleaseTerminal(ctx context.Context, req *acpclient.TerminalRequest) error {
	t, err := ts.c.b.terminals.lookup(ts.c, req)
	if err != nil {
		return err
	}
	ts.c.b.terminals.remove(t)
	return t.proc.Kill()
}

// terminalDir returns the terminal's working directory, symlinks
// resolved: cwd (default: the session's), which must lie inside the
// session's cwd or one of its external directories. A cwd that is not even
// lexically inside a root is refused before anything is looked up, so a
// refusal reveals nothing about what exists outside.
func (s *Session) terminalDir(ctx context.Context, runner TerminalRunner, cwd string) (string, error) {
	if cwd == "" {
		cwd = s.cfg.Cwd
	}
	if !path.IsAbs(cwd) {
		return "", acpclient.NewError(acpclient.CodeInvalidParams, "terminal cwd %q is not an absolute path", cwd)
	}
	cwd = path.Clean(cwd)
	roots := s.terminalRoots(ctx, runner)
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

func (s *Session) terminalRoots(ctx context.Context, runner TerminalRunner) []terminalRoot {
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
