package checkpoint

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
)

// Runner runs a program where the workspace's files are: on this machine
// (Local) or on an SSH host (SSH). A Store runs git and sh through it, so
// the same code serves both.
//
// Run runs args[0] with args[1:], env added to the host's base
// environment (Local: the process's own without its GIT_* variables; SSH:
// the login's), stdin as its input, and returns its standard output. A
// program the host
// does not have (also one a shell did not find: exit status 127) fails
// with an error wrapping exec.ErrNotFound; a non-zero
// exit fails with an error that quotes the program's standard error.
type Runner interface {
	Run(ctx context.Context, args, env []string, stdin []byte) ([]byte, error)
}

// Local runs programs on this machine, with os/exec.
type Local struct{}

// Run runs args on this machine; see Runner.
func (Local) Run(ctx context.Context, args, env []string, stdin []byte) ([]byte, error) {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	// The app's own GIT_* variables (a hook's GIT_DIR) must not reach git.
	base := os.Environ()
	base = slices.DeleteFunc(base, func(kv string) bool { return strings.HasPrefix(kv, "GIT_") })
	cmd.Env = append(base, env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if exit, ok := errors.AsType[*exec.ExitError](err); ok && exit.ExitCode() == 127 {
			// A shell's "command not found".
			err = fmt.Errorf("%w (exit status 127)", exec.ErrNotFound)
		}
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return stdout.Bytes(), fmt.Errorf("%s: %w: %s", args[0], err, msg)
		}
		return stdout.Bytes(), fmt.Errorf("%s: %w", args[0], err)
	}
	return stdout.Bytes(), nil
}

// SSH runs programs on an SSH host over a shared connection: the runner
// for a workspace on that host. The command line is quoted word by word
// for the remote POSIX shell, which never interprets it; the environment
// is set with env(1).
type SSH struct {
	// Dial returns the connection to use now, for example
	// (*sshconn.Conn).Client, which dials again after a drop.
	Dial func(ctx context.Context) (*ssh.Client, error)
	// Shell, if set, runs the commands through one remote sh that stays;
	// nil opens an SSH session per command.
	Shell *Shell
}

// dial returns the host's connection.
func (r SSH) dial(ctx context.Context) (*ssh.Client, error) {
	if r.Dial == nil {
		return nil, errors.New("checkpoint: SSH runner without Dial")
	}
	client, err := r.Dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: ssh: %w", err)
	}
	return client, nil
}

// session opens a session on the host's connection, for one command.
func (r SSH) session(ctx context.Context) (*ssh.Client, *ssh.Session, error) {
	client, err := r.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	sess, err := client.NewSession()
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: ssh session on %s: %w", client.RemoteAddr(), err)
	}
	return client, sess, nil
}

// Run runs args on the SSH host; see Runner. Cancelling ctx closes the
// command's session.
func (r SSH) Run(ctx context.Context, args, env []string, stdin []byte) ([]byte, error) {
	if r.Shell != nil {
		return r.Shell.run(ctx, r, args, env, stdin)
	}
	return r.runSession(ctx, args, env, stdin)
}

// runSession runs args in an SSH session of their own.
func (r SSH) runSession(ctx context.Context, args, env []string, stdin []byte) ([]byte, error) {
	client, sess, err := r.session(ctx)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	var stdout, stderr bytes.Buffer
	sess.Stdout, sess.Stderr = &stdout, &stderr
	sess.Stdin = bytes.NewReader(stdin)
	stop := context.AfterFunc(ctx, func() { _ = sess.Close() })
	defer stop()
	// What the login's startup files print comes before the mark, and is
	// not the command's output.
	token := rand.Text() // base32: no quoting needed
	err = sess.Run("printf '\\000%s\\000' " + token + "; " + commandLine(args, env))
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	out := stdout.Bytes()
	if _, after, ok := bytes.Cut(out, []byte("\x00"+token+"\x00")); ok {
		out = after
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if exit, ok := errors.AsType[*ssh.ExitError](err); ok && exit.ExitStatus() == 127 {
			return nil, fmt.Errorf("%s on %s: %w: %s", args[0], client.RemoteAddr(), exec.ErrNotFound, msg)
		}
		return out, fmt.Errorf("%s on %s: %w: %s", args[0], client.RemoteAddr(), err, msg)
	}
	return out, nil
}

// commandLine is args, with env before them, as one line for a POSIX
// shell: every word single-quoted.
func commandLine(args, env []string) string {
	var b strings.Builder
	b.WriteString("exec env")
	for _, w := range append(env, args...) {
		b.WriteString(" " + quoteWord(w))
	}
	return b.String()
}
