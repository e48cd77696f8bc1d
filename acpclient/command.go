package acpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// CommandTransport runs an agent as a local child process and speaks ACP
// over its stdin and stdout. The process gets its own process group, so
// closing the connection ends the agent and whatever it started. On Linux
// it runs under a reaper of its own, so everything it started ends with it
// and with this process, however it left the group; elsewhere, or where the
// reaper cannot be started, the group also dies with this process on Unix
// (a sentinel process kills it), and on Linux descendants that leave the
// group are recorded and ended too (see the package doc for what each
// platform gets).
type CommandTransport struct {
	// Path is the agent program: a path, or a name looked up in PATH (the
	// PATH of Env when Env sets one).
	Path string
	// Args are the arguments after the program name.
	Args []string
	// Dir is the working directory (default: this process's).
	Dir string
	// Env is the complete environment; nil means this process's (MinimalEnv
	// builds a smaller one that keeps what agents need).
	Env []string
	// StderrBytes is how much of the agent's stderr is kept for error
	// messages (default 64 KiB).
	StderrBytes int
	// StopTimeout is how long Close waits, after closing the agent's stdin,
	// for it to exit before sending SIGTERM to its process group; KillTimeout
	// is how long it then waits before SIGKILL. Both default to 2s.
	StopTimeout time.Duration
	KillTimeout time.Duration
	// ExitDrain is how long the stream stays open after the agent process
	// has exited, for its last output to be read, when something it left
	// behind (a descendant that left its process group) still holds its
	// stdout open; then the stream ends as if at EOF (default
	// 300ms). What the pipe already holds is still read.
	ExitDrain time.Duration
	// DescendantScan is how often the agent's descendants are recorded while
	// it runs, so those that leave its process group can be ended when it
	// stops (default 1s; negative: only when stopping).
	// Agents with the same interval share one scan of /proc per interval.
	// Linux only, and only where the agent's reaper cannot be started;
	// elsewhere nothing is recorded.
	DescendantScan time.Duration
	// NoSentinel leaves out the sentinel: a small /bin/sh process per agent,
	// in the agent's process group, that kills the group when this process
	// dies without closing the agent (SIGKILL, a crash). Without it, what the
	// agent started survives such a death (and on Unix systems other than
	// Linux, the agent too). Unix only; without /bin/sh there is none. An
	// agent under a reaper (Linux) has none: the reaper does its work.
	NoSentinel bool
	// OwnSession, for Output and CombinedOutput only, runs the helper in a
	// session of its own, without a controlling terminal. An interactive
	// shell (a login shell asked for its PATH) started in a process group
	// of its own by an app running in a terminal is stopped by job control
	// (SIGTTIN) until it times out; without a controlling terminal it has
	// no job control to set up. A sentinel cannot join a group in another
	// session, so OwnSession implies NoSentinel; on Linux the parent-death
	// signal still ends the helper with this process. Unix only.
	OwnSession bool
	// PTY, for Start only, gives the command a pseudo-terminal as its
	// stdout and stderr instead of a pipe, for apps that render a terminal
	// emulator: the command sees a terminal (isatty), so it behaves as it
	// would in one (line-buffered, progress bars), and its output comes as
	// a terminal shows it, with CR LF line ends. Stdin stays empty, and the
	// terminal is not the command's controlling terminal. Where pseudo-
	// terminals are not supported, Start fails.
	PTY bool
	// Redactor masks secrets in the stderr quoted by errors. Values of
	// environment variables whose names look like credentials are added.
	Redactor *Redactor
	// Logger, if set, receives each stderr line at debug level (redacted).
	Logger *slog.Logger

	// noReaper runs Start's command without its reaper, as where there is
	// none (tests and benchmarks compare the two); reaperPath replaces
	// /proc/self/exe as the reaper's program (tests).
	noReaper   bool
	reaperPath string
}

// Defaults of CommandTransport (its fields' docs give them).
const (
	defaultExitDrain      = 300 * time.Millisecond
	defaultDescendantScan = time.Second
)

// maxLeftoverBytes bounds what is read after ExitDrain, so a descendant that
// keeps writing cannot hold the stream open: the most a pipe can hold by
// default (/proc/sys/fs/pipe-max-size).
const maxLeftoverBytes = 1 << 20

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
	var link *reaperLink
	if !t.noReaper {
		if link, err = underReaper(cmd, t.reaperPath); err != nil {
			t.warnNoReaper(err)
		}
	}

	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		if link != nil {
			link.close()
		}
		return nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		if link != nil {
			link.close()
		}
		closeAll(stdinR, stdinW)
		return nil, err
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		if link != nil {
			link.close()
		}
		closeAll(stdinR, stdinW, stdoutR, stdoutW)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	reaped, err := startProcess(cmd)
	if err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW, stderrR, stderrW)
		if link != nil {
			// This program could not be run again as the reaper (a mount
			// without exec, a sandbox): the agent runs without one.
			closeAll(cmd.ExtraFiles...)
			link.close()
			t.warnNoReaper(err)
			plain := *t
			plain.noReaper = true
			return plain.Connect(ctx)
		}
		return nil, fmt.Errorf("acpclient: starting %s: %w", path, err)
	}
	closeAll(stdinR, stdoutW, stderrW)
	pid := cmd.Process.Pid
	var guard *sentinel
	if link != nil {
		closeAll(cmd.ExtraFiles...) // the helper's end of its status pipe
		if err := link.started(); err != nil {
			_ = cmd.Wait()
			reaped()
			link.close()
			closeAll(stdinW, stdoutR, stderrR)
			return nil, fmt.Errorf("acpclient: starting %s: %w", path, err)
		}
		pid = link.pid
		if link.reason != "" && t.Logger != nil {
			t.Logger.Warn("agent's reaper cannot hold what it starts", "why", link.reason)
		}
	} else {
		guard = t.startSentinel(pid)
	}

	red := t.redactor()
	p := &process{
		stop: stopCore{cmd: cmd, reaped: reaped, link: link, guard: guard},
		pid:  pid, stdin: stdinW, stdout: stdoutR, stderrPipe: stderrR,
		stderr: newRing(t.StderrBytes), redactor: red, logger: t.Logger,
		stopTimeout: orDefault(t.StopTimeout, 2*time.Second),
		killTimeout: orDefault(t.KillTimeout, 2*time.Second),
		exitDrain:   orDefault(t.ExitDrain, defaultExitDrain),
		maxLeftover: maxLeftoverBytes,
		exited:      make(chan struct{}), stderrDone: make(chan struct{}), stopped: make(chan struct{}),
	}
	if link == nil { // a reaper holds the whole tree: nothing to record
		p.stop.tree = newDescendants(pid, scanInterval(t.DescendantScan), p.exited)
	}
	go p.drainStderr()
	go p.reap()
	_ = ctx // the process outlives the context that started it; Close ends it
	return p, nil
}

// redactor masks the configured secrets and those of the environment.
func (t *CommandTransport) redactor() *Redactor {
	env := t.Env
	if env == nil {
		env = os.Environ()
	}
	red := &Redactor{Values: secretEnvValues(env)}
	if t.Redactor != nil {
		red.Values = append(red.Values, t.Redactor.Values...)
	}
	return red
}

// warnNoReaper logs that the agent runs without its reaper, where one
// should have run; elsewhere that is the platform's rule, not news.
func (t *CommandTransport) warnNoReaper(err error) {
	if haveReaper && t.Logger != nil {
		t.Logger.Warn("agent runs without its reaper", "why", noReaperReason(err))
	}
}

// startSentinel guards the agent's group unless told not to. Failing to
// start one costs only that protection, so it is logged, not returned.
func (t *CommandTransport) startSentinel(pgid int) *sentinel {
	if t.NoSentinel {
		return nil
	}
	s, err := startSentinel(sentinelShell, pgid)
	if err != nil && t.Logger != nil {
		t.Logger.Warn("agent runs without a sentinel", "error", err)
	}
	return s
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func scanInterval(d time.Duration) time.Duration {
	if d == 0 {
		return defaultDescendantScan
	}
	return d
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// resolve finds the agent program (see resolveAs).
func (t *CommandTransport) resolve() (string, error) { return t.resolveAs(ErrAgentNotFound) }

// resolveAs finds the program the way exec would, but with the PATH the
// program will get and an error wrapping notFound that lists where it
// looked.
func (t *CommandTransport) resolveAs(notFound error) (string, error) {
	if t.Path == "" {
		return "", fmt.Errorf("acpclient: %w: no program given", notFound)
	}
	if strings.ContainsRune(t.Path, filepath.Separator) {
		fi, err := os.Stat(t.Path)
		if err != nil {
			return "", fmt.Errorf("acpclient: %w: %s: %v", notFound, t.Path, err)
		}
		if fi.IsDir() {
			return "", fmt.Errorf("acpclient: %w: %s is a directory", notFound, t.Path)
		}
		return absProgram(t.Path, notFound)
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
			return absProgram(candidate, notFound)
		}
	}
	return "", fmt.Errorf("acpclient: %w: %q is not in PATH (searched %s)", notFound, t.Path, pathEnv)
}

// absProgram makes a program path found relative to this process's working
// directory absolute. os/exec would otherwise look it up relative to Dir,
// the agent's workspace: a different file than the one checked, and one the
// workspace, which may not be trusted, could supply.
func absProgram(path string, notFound error) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("acpclient: %w: %s: %v", notFound, path, err)
	}
	return abs, nil
}

// process is the stream to a running agent process returned by
// CommandTransport.Connect. Reading reads its stdout, writing writes its
// stdin; Close shuts it down (stdin closed, SIGTERM, SIGKILL to its group)
// and returns once it has exited. The end of its stdout starts the same
// shutdown: an agent that stops talking is not left running.
type process struct {
	stop        stopCore
	pid         int // the agent's
	stdin       *os.File
	stdout      *os.File
	stderrPipe  *os.File
	stderr      *ring
	redactor    *Redactor
	logger      *slog.Logger
	stopTimeout time.Duration
	killTimeout time.Duration
	exitDrain   time.Duration

	leftover    int // bytes read after the exit drain; only Read uses it
	maxLeftover int // maxLeftoverBytes, but for tests
	exited      chan struct{}
	stderrDone  chan struct{}
	exitErr     error
	stopping    atomic.Bool
	stopped     chan struct{} // closed when shutdown has finished
}

// Read reads the agent's stdout. Once the agent has exited, ExitDrain
// bounds how long it waits for more.
func (p *process) Read(b []byte) (int, error) {
	n, err := p.stdout.Read(b)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		n, err = p.readLeftover(b)
	}
	if err != nil && p.stopping.CompareAndSwap(false, true) {
		go p.shutdown()
	}
	return n, err
}

// readLeftover takes what the pipe still holds after the exit drain, then
// reports the end of the stream.
func (p *process) readLeftover(b []byte) (int, error) {
	return readLeftover(p.stdout, b, &p.leftover, p.maxLeftover)
}

// Write writes the agent's stdin. Once the shutdown has closed it, writes
// fail with io.ErrClosedPipe, as on any pipe whose reader is gone.
func (p *process) Write(b []byte) (int, error) {
	n, err := p.stdin.Write(b)
	if errors.Is(err, os.ErrClosed) {
		err = io.ErrClosedPipe
	}
	return n, err
}

// Pid returns the process id (also its process group id).
func (p *process) Pid() int { return p.pid }

// Exited is closed when the process has exited.
func (p *process) Exited() <-chan struct{} { return p.exited }

// Stderr returns the kept end of the agent's stderr, secrets redacted.
func (p *process) Stderr() string { return p.redactor.Redact(p.stderr.String()) }

// ExitError describes how the process ended; nil while it runs.
func (p *process) ExitError() *ExitError {
	if !settled(p.exited, p.stderrDone) {
		return nil
	}
	return &ExitError{Err: p.exitErr, Stderr: tail(p.Stderr(), stderrTailBytes)}
}

func (p *process) drainStderr() {
	defer close(p.stderrDone)
	var w io.Writer = p.stderr
	if p.logger != nil {
		w = io.MultiWriter(p.stderr, &lineLogger{logger: p.logger, redactor: p.redactor})
	}
	drainPipe(w, p.stderrPipe)
}

// reap waits for the process and ends what it left in its group (see
// stopCore.reap); something that left the group may still hold stdout:
// reading it gets ExitDrain more. Exited closes only once the sentinel has
// been reaped too, so Close and Done leave no process of ours behind. Under
// a reaper, the agent's exit is what the reaper reports.
func (p *process) reap() {
	err := p.stop.reap()
	if p.stop.link != nil {
		err = p.stop.link.exitError(err)
	}
	p.exitErr = err
	_ = p.stdout.SetReadDeadline(time.Now().Add(p.exitDrain))
	close(p.exited)
}

// Close ends the agent: it closes stdin and waits StopTimeout for a clean
// exit, then signals the process group with SIGTERM and, after KillTimeout,
// SIGKILL; descendants recorded outside the group are then killed (under a
// reaper, the last step is the reaper killing the agent's whole tree). It
// returns once the process has exited and been reaped, also when the end of
// its stdout had already started the shutdown.
func (p *process) Close() error {
	if p.stopping.CompareAndSwap(false, true) {
		p.shutdown()
	}
	<-p.stopped
	return nil
}

// shutdown is the stop sequence; it runs once.
func (p *process) shutdown() {
	defer close(p.stopped)
	// Record the tree while the agent still links it: once it exits, its
	// children are re-parented and no longer found.
	p.stop.sample()
	p.stdin.Close()
	if !waitFor(p.exited, p.stopTimeout) {
		p.stop.signal(false)
		if !waitFor(p.exited, p.killTimeout) {
			p.stop.signal(true)
			<-p.exited
		}
	}
	p.stop.endTree()
	// A grandchild that left the group may still hold stdout or
	// stderr open; do not let it keep our readers blocked.
	if !waitFor(p.stderrDone, 500*time.Millisecond) {
		p.stderrPipe.Close()
		<-p.stderrDone
	}
	p.stdout.Close()
	p.stderrPipe.Close()
}

// settled reports whether a process has exited; if so it first gives its
// stderr a moment to deliver its last words from the pipe.
func settled(exited, stderrDone <-chan struct{}) bool {
	select {
	case <-exited:
	default:
		return false
	}
	waitFor(stderrDone, 200*time.Millisecond)
	return true
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
		l.logger.Debug(StderrLine, "line", l.redactor.Redact(string(l.partial[:i])))
		l.partial = l.partial[i+1:]
	}
	if len(l.partial) > 8<<10 {
		l.partial = l.partial[:0]
	}
	return len(p), nil
}
