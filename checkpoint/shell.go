package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
)

// Shell runs the commands of SSH runners through one remote sh that
// stays, instead of an SSH session per command: opening a session costs
// about what a git command does (some 18 ms on a loopback sshd), and a
// turn's checkpoint runs three commands. One Shell serves every runner
// and Store that names it, so a host's many sessions hold one SSH
// session (hosts cap them per connection: OpenSSH's MaxSessions is 10);
// a command that comes while another runs gets a session of its own, as
// do all commands after Close. A new connection (Dial returning another
// client) starts a new sh. The zero value is ready to use.
//
// The remote sh reads its commands from the session's input. Each one's
// standard input travels inside the command (printf's octal escapes, so a
// NUL-separated list passes), its output comes back as it is, followed by
// a mark no output holds (two NULs and a random token), its exit status
// and its standard error.
type Shell struct {
	mu     sync.Mutex
	w      *shellSession // nil until the first command, and after a failure
	closed bool
}

// shellSession is one running remote sh.
type shellSession struct {
	client *ssh.Client
	sess   *ssh.Session
	in     io.WriteCloser
	out    *bufio.Reader
	token  string // random: after two NULs, it marks the end of an output
}

// run runs args on r's host through the shell; see Runner.
func (sh *Shell) run(ctx context.Context, r SSH, args, env []string, stdin []byte) ([]byte, error) {
	if !sh.mu.TryLock() {
		return r.runSession(ctx, args, env, stdin)
	}
	defer sh.mu.Unlock()
	if sh.closed {
		return r.runSession(ctx, args, env, stdin)
	}
	client, err := r.dial(ctx)
	if err != nil {
		return nil, err
	}
	if sh.w != nil && sh.w.client != client {
		sh.w.close() // the connection was dialed again
		sh.w = nil
	}
	if sh.w == nil {
		if sh.w, err = startShell(ctx, client); err != nil {
			return nil, err
		}
	}
	out, status, msg, err := sh.w.do(ctx, request(args, env, stdin))
	if err != nil {
		sh.w.close()
		sh.w = nil
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s on %s: %w", args[0], client.RemoteAddr(), err)
	}
	switch {
	case status == 127:
		return nil, fmt.Errorf("%s on %s: %w: %s", args[0], client.RemoteAddr(), exec.ErrNotFound, msg)
	case status != 0:
		return out, fmt.Errorf("%s on %s: exit status %d: %s", args[0], client.RemoteAddr(), status, msg)
	}
	return out, nil
}

// Close ends the remote sh; later commands get a session each.
func (sh *Shell) Close() {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.closed = true
	if sh.w != nil {
		sh.w.close()
		sh.w = nil
	}
}

// startShell starts a remote sh on client and waits until it answers, so
// that what the login's startup files print is not taken for output.
func startShell(ctx context.Context, client *ssh.Client) (*shellSession, error) {
	sess, err := client.NewSession()
	if err != nil {
		return nil, fmt.Errorf("checkpoint: ssh session on %s: %w", client.RemoteAddr(), err)
	}
	w := &shellSession{client: client, sess: sess}
	w.in, err = sess.StdinPipe()
	if err == nil {
		var out io.Reader
		out, err = sess.StdoutPipe()
		w.out = bufio.NewReaderSize(out, 64<<10)
	}
	if err == nil {
		// fd 3 is the session's output: a command's output goes there
		// while its standard error is kept for after the mark.
		err = sess.Start(commandLine([]string{"sh", "-c", "exec 3>&1; exec sh -s"}, nil))
	}
	if err != nil {
		sess.Close()
		return nil, fmt.Errorf("checkpoint: starting a shell on %s: %w", client.RemoteAddr(), err)
	}
	w.token = rand.Text()
	if _, _, _, err := w.do(ctx, "e=; s=0\n"); err != nil {
		w.close()
		return nil, fmt.Errorf("checkpoint: starting a shell on %s: %w", client.RemoteAddr(), err)
	}
	return w, nil
}

// request is the shell text that runs args with env added and stdin as
// input, leaving its exit status in s and its standard error in e. It
// runs in the subshell of e's command substitution, sparing processes: the
// environment is exported there rather than set by env(1), the command
// replaces the subshell (exec), and a "sh -c SCRIPT NAME ARGS..." runs
// SCRIPT in it (eval, with ARGS as its arguments) rather than in a new sh.
func request(args, env []string, stdin []byte) string {
	var b strings.Builder
	b.WriteString("e=$(")
	if len(stdin) > 0 {
		b.WriteString("printf '")
		for _, c := range stdin {
			switch c {
			case 0:
				b.WriteString(`\000`)
			case '\\':
				b.WriteString(`\\`)
			case '%':
				b.WriteString("%%")
			case '\'':
				b.WriteString(`'\''`)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteString("' | ")
	}
	b.WriteString("{ " + command(args, env) + "; } 2>&1 >&3")
	if len(stdin) == 0 {
		// The command must not read the shell's input: its commands.
		b.WriteString(" </dev/null")
	}
	b.WriteString("); s=$?\n")
	return b.String()
}

// command is the shell text of args run with env added, in a subshell
// it may replace.
func command(args, env []string) string {
	var b strings.Builder
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if !envName(name) {
			// Not a name sh can export: env(1) sets them all.
			return strings.TrimPrefix(commandLine(args, env), "exec ")
		}
		b.WriteString("export " + name + "=" + quoteWord(value) + "; ")
	}
	if len(args) >= 4 && args[0] == "sh" && args[1] == "-c" {
		b.WriteString("set --")
		for _, a := range args[4:] {
			b.WriteString(" " + quoteWord(a))
		}
		b.WriteString("; eval " + quoteWord(args[2]))
		return b.String()
	}
	b.WriteString("exec")
	for _, a := range args {
		b.WriteString(" " + quoteWord(a))
	}
	return b.String()
}

// quoteWord single-quotes a word for sh.
func quoteWord(w string) string {
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// envName reports whether name is one sh can export.
func envName(name string) bool {
	for i, c := range name {
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return name != ""
}

// do is run, given up when ctx ends; the caller then closes the session,
// and the read ends when the host lets go of the session's output (a
// command still running holds it).
func (w *shellSession) do(ctx context.Context, req string) (out []byte, status int, msg string, err error) {
	type result struct {
		out    []byte
		status int
		msg    string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		out, status, msg, err := w.run(req)
		done <- result{out, status, msg, err}
	}()
	select {
	case r := <-done:
		return r.out, r.status, r.msg, r.err
	case <-ctx.Done():
		return nil, 0, "", ctx.Err()
	}
}

// run sends one request and reads what it printed, its exit status and
// its standard error.
func (w *shellSession) run(req string) (out []byte, status int, msg string, err error) {
	req += "printf '\\000\\000%s %d\\n%s\\000\\000%s\\n' " + w.token + " \"$s\" \"$e\" " + w.token + "\n"
	if _, err := io.WriteString(w.in, req); err != nil {
		return nil, 0, "", err
	}
	if out, err = w.until([]byte("\x00\x00" + w.token + " ")); err != nil {
		return nil, 0, "", err
	}
	line, err := w.out.ReadString('\n')
	if err != nil {
		return nil, 0, "", err
	}
	if status, err = strconv.Atoi(strings.TrimSpace(line)); err != nil {
		return nil, 0, "", fmt.Errorf("the shell's answer %q is not an exit status", line)
	}
	stderr, err := w.until([]byte("\x00\x00" + w.token + "\n"))
	if err != nil {
		return nil, 0, "", err
	}
	return out, status, strings.TrimSpace(string(stderr)), nil
}

// until reads up to mark and returns what came before it. The mark
// starts with a NUL: at each NUL read, the rest is looked for ahead (it
// always comes: the mark follows whatever the command printed).
func (w *shellSession) until(mark []byte) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := w.out.ReadSlice(0)
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return nil, err
		}
		rest, err := w.out.Peek(len(mark) - 1)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(rest, mark[1:]) {
			_, _ = w.out.Discard(len(rest))
			return buf[:len(buf)-1], nil
		}
	}
}

// close ends the session; its remote sh ends with its input. It is
// called once per session (Wait returns once).
func (w *shellSession) close() {
	_ = w.in.Close()
	_ = w.sess.Close()
	go func() { _ = w.sess.Wait() }() // returns when the host answers or the connection ends
}
