package acpclient

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// CommandTransport runs an agent as a local child process and speaks ACP
// over its stdin and stdout. The process gets its own process group, so
// closing the connection ends the agent and whatever it started.
type CommandTransport struct {
	// Path is the agent program: a path, or a name looked up in PATH (the
	// PATH of Env when Env sets one).
	Path string
	// Args are the arguments after the program name.
	Args []string
	// Dir is the working directory (default: this process's).
	Dir string
	// Env is the complete environment; nil means this process's.
	Env []string
	// StderrBytes is how much of the agent's stderr is kept for error
	// messages (default DefaultStderrBytes).
	StderrBytes int
	// StopTimeout is how long Close waits, after closing the agent's stdin,
	// for it to exit before sending SIGTERM to its process group; KillTimeout
	// is how long it then waits before SIGKILL. Both default to 2s.
	StopTimeout time.Duration
	KillTimeout time.Duration
	// Redactor masks secrets in the stderr quoted by errors. Values of
	// environment variables whose names look like credentials are added.
	Redactor *Redactor
	// Logger, if set, receives each stderr line at debug level (redacted).
	Logger *slog.Logger
}

// Command returns a CommandTransport for the named program and arguments.
func Command(name string, args ...string) *CommandTransport {
	return &CommandTransport{Path: name, Args: args}
}

// Connect starts the process. A program that cannot be found is an error
// wrapping ErrAgentNotFound that says where it was looked for.
func (t *CommandTransport) Connect(ctx context.Context) (io.ReadWriteCloser, error) {
	path, err := t.resolve()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, t.Args...)
	cmd.Dir, cmd.Env = t.Dir, t.Env
	setProcessGroup(cmd)

	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW)
		return nil, err
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	if err := cmd.Start(); err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW, stderrR, stderrW)
		return nil, fmt.Errorf("acpclient: starting %s: %w", path, err)
	}
	closeAll(stdinR, stdoutW, stderrW)

	env := t.Env
	if env == nil {
		env = os.Environ()
	}
	red := &Redactor{Values: secretEnvValues(env)}
	if t.Redactor != nil {
		red.Values = append(red.Values, t.Redactor.Values...)
	}
	p := &Process{
		cmd: cmd, stdin: stdinW, stdout: stdoutR, stderrPipe: stderrR,
		stderr: newRing(t.StderrBytes), redactor: red, logger: t.Logger,
		stopTimeout: orDefault(t.StopTimeout, 2*time.Second),
		killTimeout: orDefault(t.KillTimeout, 2*time.Second),
		exited:      make(chan struct{}), stderrDone: make(chan struct{}),
	}
	go p.drainStderr()
	go p.reap()
	_ = ctx // the process outlives the context that started it; Close ends it
	return p, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// resolve finds the program the way exec would, but with the PATH the agent
// will get and an error that lists where it looked.
func (t *CommandTransport) resolve() (string, error) {
	if t.Path == "" {
		return "", fmt.Errorf("%w: no program given", ErrAgentNotFound)
	}
	if strings.ContainsRune(t.Path, filepath.Separator) {
		if _, err := os.Stat(t.Path); err != nil {
			return "", fmt.Errorf("%w: %s: %v", ErrAgentNotFound, t.Path, err)
		}
		return t.Path, nil
	}
	pathEnv := os.Getenv("PATH")
	for _, kv := range t.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		candidate := filepath.Join(dir, t.Path)
		if fi, err := os.Stat(candidate); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return candidate, nil
		}
	}
	return "", fmt.Errorf("%w: %q is not in PATH (searched %s)", ErrAgentNotFound, t.Path, pathEnv)
}

// Process is the stream to a running agent process returned by
// CommandTransport.Connect. Reading reads its stdout, writing writes its
// stdin; Close shuts it down (stdin closed, SIGTERM, SIGKILL to its group).
type Process struct {
	cmd         *exec.Cmd
	stdin       *os.File
	stdout      *os.File
	stderrPipe  *os.File
	stderr      *ring
	redactor    *Redactor
	logger      *slog.Logger
	stopTimeout time.Duration
	killTimeout time.Duration

	exited     chan struct{}
	stderrDone chan struct{}
	exitErr    error
	closeOnce  sync.Once
}

// Read reads the agent's stdout.
func (p *Process) Read(b []byte) (int, error) { return p.stdout.Read(b) }

// Write writes the agent's stdin.
func (p *Process) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Pid returns the process id (also its process group id).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Stderr returns the kept end of the agent's stderr, secrets redacted.
func (p *Process) Stderr() string { return p.redactor.Redact(p.stderr.String()) }

// ExitError describes how the process ended; nil while it runs.
func (p *Process) ExitError() *ExitError {
	select {
	case <-p.exited:
	default:
		return nil
	}
	// Stderr may still hold its last words in the pipe.
	select {
	case <-p.stderrDone:
	case <-time.After(200 * time.Millisecond):
	}
	return &ExitError{Err: p.exitErr, Stderr: tail(p.Stderr(), stderrTailBytes)}
}

func (p *Process) drainStderr() {
	defer close(p.stderrDone)
	var w io.Writer = p.stderr
	if p.logger != nil {
		w = io.MultiWriter(p.stderr, &lineLogger{logger: p.logger, redactor: p.redactor})
	}
	_, _ = io.Copy(w, p.stderrPipe)
}

// reap waits for the process, then ends anything left in its group, which
// would otherwise keep the stdout pipe open and outlive the agent.
func (p *Process) reap() {
	p.exitErr = p.cmd.Wait()
	killGroup(p.cmd, true)
	close(p.exited)
}

// Close ends the agent: it closes stdin and waits StopTimeout for a clean
// exit, then signals the process group with SIGTERM and, after KillTimeout,
// SIGKILL. It returns once the process has exited.
func (p *Process) Close() error {
	p.closeOnce.Do(func() {
		p.stdin.Close()
		if !waitFor(p.exited, p.stopTimeout) {
			killGroup(p.cmd, false)
			if !waitFor(p.exited, p.killTimeout) {
				killGroup(p.cmd, true)
				<-p.exited
			}
		}
		// A grandchild that left the group may still hold stdout or
		// stderr open; do not let it keep our readers blocked.
		if !waitFor(p.stderrDone, 500*time.Millisecond) {
			p.stderrPipe.Close()
			<-p.stderrDone
		}
		p.stdout.Close()
		p.stderrPipe.Close()
	})
	return nil
}

func waitFor(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// lineLogger logs complete stderr lines.
type lineLogger struct {
	logger   *slog.Logger
	redactor *Redactor
	partial  []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.partial = append(l.partial, p...)
	for {
		i := strings.IndexByte(string(l.partial), '\n')
		if i < 0 {
			break
		}
		l.logger.Debug("agent stderr", "line", l.redactor.Redact(string(l.partial[:i])))
		l.partial = l.partial[i+1:]
	}
	if len(l.partial) > 8<<10 {
		l.partial = l.partial[:0]
	}
	return len(p), nil
}
