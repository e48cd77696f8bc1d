package terminal

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/acphost/acphost/acpclient"
)

// Runner starts the commands of the terminals an agent creates
// (terminal/create), where the agent's files are: Local on this machine,
// the default; SSH runs them on an SSH host. The bridge and the Set do the
// rest (policy, cwd confinement, output window, events,
// lifetime), so a runner only starts processes and resolves directories.
type Runner interface {
	// ResolveDir returns dir, an absolute path, with its symlinks resolved,
	// or an error when it is not an existing directory. The bridge confines
	// a terminal's cwd to the session's roots with it.
	ResolveDir(ctx context.Context, dir string) (string, error)
	// Start starts cmd in its own process group, with the runner's base
	// environment plus cmd.Env.
	Start(ctx context.Context, cmd Command) (Process, error)
}

// Command is a command to run for a terminal: the program and its
// arguments exactly as the agent gave them, executed without a shell.
type Command struct {
	// Command is the program: a name looked up in the PATH the command
	// gets, an absolute path, or a path relative to Dir.
	Command string
	Args    []string
	// Env is added to the runner's base environment (and wins over it).
	Env []acpclient.EnvVariable
	// Dir is the working directory: absolute, inside the session's roots.
	Dir string
	// PTY asks for a pseudo-terminal instead of a pipe
	// (Options.PTY), where the runner has them.
	PTY bool
}

// Process is a running terminal command (an acpclient.RunningCommand
// is one). One that also has a method Uncontained() string (as
// acpclient.RunningCommand does) says through it, once the command has
// ended, why the command's processes cannot all be accounted for (""
// when they can); the terminal's exit event carries it
// (Output.Uncontained).
type Process interface {
	// Read reads the command's stdout and stderr, combined in the order
	// written; io.EOF once the command and its process group have ended.
	io.Reader
	// Wait waits for the command's end and says how it ended.
	Wait() *acpclient.TerminalExitStatus
	// Kill ends the command and everything in its process group; it does
	// not wait.
	Kill() error
	// Close kills the command if it runs, waits until it is gone and frees
	// it; Read then returns io.EOF.
	Close() error
}

// Local runs terminal commands on this machine, each in its own
// process group (see acpclient.CommandTransport.Start). On Linux each runs
// under a reaper of its own, a child subreaper, so every process it
// started, also a daemon that left its group and session and whose parent
// exited at once, is ended when the command ends, is killed or released,
// or this process dies. Elsewhere a sentinel ends the group with this
// process, descendants that left the group survive, and the exit event
// says so (Output.Uncontained). A program that cannot be found
// fails terminal/create with "program not found".
//
// The command's environment is a minimal base plus what the agent asks
// for, so nothing else of the host's environment (tokens, keys) leaks into
// it: PATH (default "/usr/local/bin:/usr/bin:/bin"), HOME, USER, LOGNAME,
// LANG, LC_ALL, LC_CTYPE, TZ and TMPDIR as this process has them (those it
// has), and TERM=dumb, as output goes to a pipe, not a terminal.
type Local struct {
	// BaseEnv replaces the base environment ("NAME=value" entries); nil
	// means the one described above.
	BaseEnv []string
}

// baseEnvNames are the variables Local passes on from this process.
var baseEnvNames = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"}

// defaultPath is the PATH of a command when this process has none.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// ResolveDir resolves dir's symlinks and checks that it is a directory.
func (Local) ResolveDir(_ context.Context, dir string) (string, error) {
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return resolved, nil
}

// Start starts cmd as a local process group.
func (l Local) Start(ctx context.Context, cmd Command) (Process, error) {
	program := cmd.Command
	if strings.ContainsRune(program, '/') && !filepath.IsAbs(program) {
		program = filepath.Join(cmd.Dir, program) // the agent means its cwd, not ours
	}
	t := &acpclient.CommandTransport{Path: program, Args: cmd.Args, Dir: cmd.Dir, Env: l.env(cmd.Env), PTY: cmd.PTY}
	return t.Start(ctx)
}

// env is the base environment with the agent's variables set over it.
func (l Local) env(extra []acpclient.EnvVariable) []string {
	base := l.BaseEnv
	if base == nil {
		base = defaultBaseEnv()
	}
	env := map[string]string{}
	var order []string
	set := func(name, value string) {
		if _, ok := env[name]; !ok {
			order = append(order, name)
		}
		env[name] = value
	}
	for _, kv := range base {
		name, value, _ := strings.Cut(kv, "=")
		set(name, value)
	}
	for _, v := range extra {
		set(v.Name, v.Value)
	}
	out := make([]string, 0, len(order))
	for _, name := range order {
		out = append(out, name+"="+env[name])
	}
	return out
}

// defaultBaseEnv is the documented base: a few variables of this process
// and TERM=dumb.
func defaultBaseEnv() []string {
	env := acpclient.FilterEnv(os.Environ(), baseEnvNames...)
	if _, ok := os.LookupEnv("PATH"); !ok {
		env = append(env, "PATH="+defaultPath)
	}
	return append(env, "TERM=dumb")
}
