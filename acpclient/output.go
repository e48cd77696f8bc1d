package acpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// MaxOutputBytes is how much of a helper command's stdout Output keeps; the
// rest is read and discarded, so the command never blocks on a full pipe.
const MaxOutputBytes = 1 << 20

// ErrOutputTruncated reports that a helper command wrote more than
// MaxOutputBytes to stdout; Output returns the first MaxOutputBytes with it.
var ErrOutputTruncated = errors.New("acpclient: output exceeds the limit")

// Output runs the program as a short-lived helper command (a version probe,
// a status command) with the same guarantees an agent gets: its own process
// group, on Linux a parent-death signal, on Unix a sentinel that kills the
// group if this process dies. Stdin is empty. It returns the command's
// stdout (at most MaxOutputBytes, see ErrOutputTruncated) once the command
// has exited; a non-zero exit is an *ExitError quoting the end of its stderr
// (redacted as for an agent).
//
// When the command exits, or ctx ends first, the whole group is killed
// (SIGKILL; no SIGTERM step: a helper has nothing to save) and reaped, so
// nothing it started in its group outlives the call. The error of an ended
// ctx wraps ctx.Err(). Without a sentinel (NoSentinel, or no /bin/sh) the
// group id is not pinned once the command is reaped, so the group is then
// signalled only before the reap, when ctx ends. Stop and kill timeouts and
// descendant scanning do not apply; ExitDrain bounds how long output is
// read after the exit, when something that left the group holds the pipe.
func (t *CommandTransport) Output(ctx context.Context) ([]byte, error) {
	return t.output(ctx, false)
}

// CombinedOutput is Output with stderr written into the same capture as
// stdout (and not quoted by an *ExitError), for programs that print what is
// wanted, such as a version, on either.
func (t *CommandTransport) CombinedOutput(ctx context.Context) ([]byte, error) {
	return t.output(ctx, true)
}

func (t *CommandTransport) output(ctx context.Context, combined bool) ([]byte, error) {
	path, err := t.resolve()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, t.Args...)
	cmd.Dir, cmd.Env = t.Dir, t.Env
	if t.OwnSession {
		setOwnSession(cmd)
	} else {
		setProcessGroup(cmd)
	}
	h, err := startHelper(cmd, combined)
	if err != nil {
		return nil, fmt.Errorf("acpclient: starting %s: %w", path, err)
	}
	if !t.OwnSession {
		h.stop.guard = t.startSentinel(cmd.Process.Pid)
	}
	h.redactor = t.redactor()
	return h.finish(ctx, path, orDefault(t.ExitDrain, defaultExitDrain), t.StderrBytes)
}

// helper is a started helper command and the readers of its output.
type helper struct {
	stop           stopCore
	redactor       *Redactor
	stdout, stderr *os.File
	out            chan capture
	errOut         *ring
	errDone        chan struct{}
}

type capture struct {
	data      []byte
	truncated bool
}

func startHelper(cmd *exec.Cmd, combined bool) (*helper, error) {
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeAll(stdoutR, stdoutW)
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = stdoutW, stderrW
	if combined {
		cmd.Stderr = stdoutW // the stderr pipe then only ever reads its end
	}
	reaped, err := startProcess(cmd)
	closeAll(stdoutW, stderrW)
	if err != nil {
		closeAll(stdoutR, stderrR)
		return nil, err
	}
	return &helper{stop: stopCore{cmd: cmd, reaped: reaped}, stdout: stdoutR, stderr: stderrR}, nil
}

// finish captures the output, waits for the exit or the end of ctx, kills
// the group and reaps everything.
func (h *helper) finish(ctx context.Context, path string, drain time.Duration, stderrBytes int) ([]byte, error) {
	h.out, h.errOut, h.errDone = make(chan capture, 1), newRing(stderrBytes), make(chan struct{})
	go func() { h.out <- readCapped(h.stdout, MaxOutputBytes) }()
	go func() {
		defer close(h.errDone)
		_, _ = io.Copy(h.errOut, h.stderr)
	}()
	exited := make(chan error, 1)
	go func() { exited <- h.stop.reap() }()

	var waitErr, ctxErr error
	select {
	case waitErr = <-exited:
	case <-ctx.Done():
		ctxErr = ctx.Err()
		h.stop.signal(true)
		waitErr = <-exited
	}

	// Something that left the group may hold the pipes: bound the wait.
	deadline := time.Now().Add(drain)
	_ = h.stdout.SetReadDeadline(deadline)
	_ = h.stderr.SetReadDeadline(deadline)
	c := <-h.out
	<-h.errDone
	closeAll(h.stdout, h.stderr)

	switch {
	case ctxErr != nil:
		return c.data, fmt.Errorf("acpclient: %s: %w", path, ctxErr)
	case waitErr != nil:
		return c.data, &ExitError{Err: waitErr, Stderr: tail(h.redactor.Redact(h.errOut.String()), stderrTailBytes)}
	case c.truncated:
		return c.data, fmt.Errorf("%w: %s wrote more than %d bytes", ErrOutputTruncated, path, MaxOutputBytes)
	}
	return c.data, nil
}

// readCapped reads r to its end (or a read error), keeping the first max
// bytes.
func readCapped(r io.Reader, max int) capture {
	var c capture
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		keep := min(n, max-len(c.data))
		c.data = append(c.data, buf[:keep]...)
		if keep < n {
			c.truncated = true
		}
		if err != nil {
			return c
		}
	}
}
