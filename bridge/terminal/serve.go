package terminal

import (
	"context"
	"errors"
	"strings"

	"github.com/acphost/acphost/acpclient"
)

// Create serves terminal/create for owner, whose policy the caller has
// checked: it starts req's command with runner (as Set.Runner returns
// it) in the directory dir
// returns (the caller confines it to the session's roots) and answers with
// the new terminal's id. Its errors, by code: -32602 (invalid params) for
// a negative outputByteLimit and an environment variable whose name is
// empty or holds '=' or NUL (or, on an SSH host, is not a shell name) or
// whose value holds NUL, and whatever dir returns; -32002 (resource not
// found) for a program that cannot be found locally (an SSH host reports
// it as exit code 127 instead); -32603 for any other failure to start.
func (set *Set) Create(ctx context.Context, owner Owner, opts *Options, runner Runner, req *acpclient.CreateTerminalRequest, dir func(context.Context) (string, error)) (*acpclient.CreateTerminalResponse, error) {
	if err := checkEnv(req.Env); err != nil {
		return nil, err
	}
	limit, err := opts.limitFor(req.OutputByteLimit)
	if err != nil {
		return nil, err
	}
	cwd, err := dir(ctx)
	if err != nil {
		return nil, err
	}
	proc, err := runner.Start(ctx, Command{Command: req.Command, Args: req.Args, Env: req.Env, Dir: cwd, PTY: opts.PTY})
	if err != nil {
		return nil, startError(req.Command, err)
	}
	id, err := set.add(owner, proc, limit)
	if err != nil {
		return nil, acpclient.NewError(acpclient.CodeInternalError, "running %s: %v", req.Command, err)
	}
	return &acpclient.CreateTerminalResponse{TerminalID: id}, nil
}

// checkEnv refuses the variables no runner can set: a name that is empty
// or holds '=' or NUL, a value that holds NUL.
func checkEnv(env []acpclient.EnvVariable) error {
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

// Output serves terminal/output: the output kept so far, and the exit
// status once the command has ended.
func (set *Set) Output(owner Owner, req *acpclient.TerminalRequest) (*acpclient.TerminalOutputResponse, error) {
	t, err := set.lookup(owner, req)
	if err != nil {
		return nil, err
	}
	status := t.exitStatus()
	out, truncated := t.out.output(status != nil)
	return &acpclient.TerminalOutputResponse{Output: out, Truncated: truncated, ExitStatus: status}, nil
}

// Wait serves terminal/wait_for_exit: reply is called once the command
// has ended, or ctx is done, from a goroutine of the set, so the
// connection is not held up meanwhile.
func (set *Set) Wait(ctx context.Context, owner Owner, req *acpclient.TerminalRequest, reply func(*acpclient.TerminalExitStatus, error)) {
	t, err := set.lookup(owner, req)
	if err != nil {
		reply(nil, err)
		return
	}
	if st := t.exitStatus(); st != nil {
		reply(st, nil)
		return
	}
	err = set.Go(func() {
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

// Kill serves terminal/kill: it ends the command and its process group;
// the terminal stays, with its output and exit status, until released.
func (set *Set) Kill(owner Owner, req *acpclient.TerminalRequest) error {
	t, err := set.lookup(owner, req)
	if err != nil {
		return err
	}
	return t.proc.Kill()
}

// Release serves terminal/release: it ends the command if it runs and
// forgets the terminal, so later calls with its id fail.
func (set *Set) Release(owner Owner, req *acpclient.TerminalRequest) error {
	t, err := set.lookup(owner, req)
	if err != nil {
		return err
	}
	set.remove(t)
	return t.proc.Kill()
}
