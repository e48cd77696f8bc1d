package terminal

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/fsroot"
)

// SSH runs terminal commands on an SSH host, over a shared
// connection: the runner for an agent launched there (the bridge picks it
// by itself when the agent's transport is an acpclient.SSHTransport, so its
// commands run where its files are). Each command runs under the remote
// agents' wrapper (acpclient.SSHTransport.Start): its own session there,
// killed with SIGKILL when the terminal is killed or released, when its
// session, agent or bridge ends, or when the connection drops; the command
// and its arguments are quoted, never interpreted by the remote shell;
// stdout and stderr are joined on the host, in order, and the wrapper's
// own messages stay out of them. On a host with python3 the command runs
// under a remote reaper, a child subreaper, so every process it started,
// also a daemon that left its session and whose parent exited at once, is
// ended with it, as locally. On a host without python3, descendants that
// leave the command's session (setsid) are recorded once a second where
// /proc is, and one orphaned between two records survives: the exit event
// says so (Output.Uncontained); the limits are
// acpclient.SSHTransport's. The exit status counts
// when the command exits, even while something it left behind holds its
// output open (that output is then cut a second later), and every end of a
// terminal is bounded in time, whatever the host does.
//
// The command's environment is a minimal base plus what the agent asks
// for: PATH, HOME, USER, LOGNAME, LANG, LC_ALL, LC_CTYPE, TZ and TMPDIR as
// the remote login has them (those it has), and TERM=dumb. A cwd is
// resolved over SFTP, symlinks followed on the host.
//
// A program the host cannot find does not fail terminal/create: the
// terminal ends with exit code 127 and the shell's message as its output.
type SSH struct {
	// Dial returns the connection to use now, for example
	// (*sshconn.Conn).Client, which dials again after a drop.
	Dial func(ctx context.Context) (*ssh.Client, error)
	// KeepEnv replaces the names of the login variables the base keeps;
	// nil means the ones above.
	KeepEnv []string
	// Logger receives a warning while a command's start is slow, saying
	// how long it has waited and on what (the remote login shell's startup
	// files, most often); see acpclient.SSHTransport.Logger. In a bridge,
	// nil means the bridge's Config.Logger.
	Logger *slog.Logger

	// sftp, set by the Set that runs the terminals (Set.Runner), is its
	// one SFTP client; nil (a runner used alone) opens a session per
	// ResolveDir.
	sftp *sftpSessions
}

// ResolveDir resolves dir's symlinks on the host and checks that it is a
// directory, over SFTP: in a bridge, with the one SFTP session its
// terminals share on the connection (opened at the first call, closed with
// the bridge); used alone, in an SFTP session of its own.
func (r SSH) ResolveDir(ctx context.Context, dir string) (string, error) {
	client, err := r.client(ctx)
	if err != nil {
		return "", err
	}
	if r.sftp != nil {
		c, err := r.sftp.get(client)
		if err != nil {
			return "", err
		}
		return fsroot.ResolveSFTPDir(ctx, c, dir)
	}
	c, err := sftp.NewClient(client)
	if err != nil {
		return "", fmt.Errorf("sftp on %s: %w", client.RemoteAddr(), err)
	}
	defer c.Close()
	return fsroot.ResolveSFTPDir(ctx, c, dir)
}

// Start starts cmd on the host in a wrapped session of its own.
func (r SSH) Start(ctx context.Context, cmd Command) (Process, error) {
	keep := r.KeepEnv
	if keep == nil {
		keep = baseEnvNames
	}
	env := []string{"TERM=dumb"}
	for _, v := range cmd.Env {
		if !shellName(v.Name) {
			// The remote shell exports it: it must be a name the shell takes.
			return nil, acpclient.NewError(acpclient.CodeInvalidParams, "terminal/create: environment variable %q refused: on an SSH host a name is letters, digits and underscores, not starting with a digit", v.Name)
		}
		env = append(env, v.Name+"="+v.Value)
	}
	t := &acpclient.SSHTransport{Dial: r.client, Path: cmd.Command, Args: cmd.Args, Dir: cmd.Dir, KeepEnv: keep, Env: env, Logger: r.Logger}
	return t.Start(ctx)
}

// shellName reports whether s is a name a POSIX shell can export.
func shellName(s string) bool {
	for i, r := range s {
		if r != '_' && !('a' <= r && r <= 'z') && !('A' <= r && r <= 'Z') && (i == 0 || !('0' <= r && r <= '9')) {
			return false
		}
	}
	return s != ""
}

func (r SSH) client(ctx context.Context) (*ssh.Client, error) {
	if r.Dial == nil {
		return nil, fmt.Errorf("terminal: SSH without Dial")
	}
	return r.Dial(ctx)
}

// Runner returns r as the set runs it: an SSH runner shares the set's one
// SFTP client for its directories, opened at its first use on a
// connection and closed with the set.
func (set *Set) Runner(r Runner) Runner {
	if st, ok := r.(SSH); ok && st.sftp == nil {
		st.sftp = &set.sftp
		return st
	}
	return r
}
