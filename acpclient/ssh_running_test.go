package acpclient

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/acphost/acphost/internal/fakebin"
	"github.com/acphost/acphost/internal/sshdtest"
	"github.com/acphost/acphost/internal/sshtest"
	"github.com/acphost/acphost/internal/waitfor"
)

// sshServers runs test against the in-process SSH server and the real sshd
// (skipped where sshd is not installed).
func sshServers(t *testing.T, test func(t *testing.T, client *ssh.Client)) {
	t.Run("sshtest", func(t *testing.T) { test(t, sshtest.Start(t, nil).Dial(t)) })
	t.Run("sshd", func(t *testing.T) { test(t, sshdtest.Start(t).Dial(t)) })
}

// startRemoteScript starts sh -c script as a remote terminal command,
// bounded: a start that does not come up fails saying what it waited on.
func startRemoteScript(t *testing.T, tr *SSHTransport, script string) *remoteCommand {
	t.Helper()
	tr.Path, tr.Args = "sh", []string{"-c", script}
	return startBoundedCommand(t, tr)
}

// startBoundedCommand starts tr's command with a bounded context and
// closes it, bounded, when the test ends.
func startBoundedCommand(t *testing.T, tr *SSHTransport) *remoteCommand {
	t.Helper()
	c, err := tr.Start(waitfor.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { waitfor.Call(t, "closing the remote command", func() { c.Close() }) })
	return c.(*remoteCommand)
}

// TestSSHStartOutputAndStatus: stdout and stderr arrive joined in order,
// stdin is empty, the environment is KeepEnv's plus Env and nothing else of
// the login's, and the exit code or signal is reported.
func TestSSHStartOutputAndStatus(t *testing.T) {
	sshServers(t, func(t *testing.T, client *ssh.Client) {
		tr := &SSHTransport{Client: client, Dir: t.TempDir(), KeepEnv: []string{"HOME", "ACPHOST_NOT_SET_ANYWHERE"},
			Env: []string{"FOO=bar baz"}}
		c := startRemoteScript(t, tr, `echo one; echo two >&2; echo three; cat; echo "in=done"; env | sort | grep -v '^PWD=\|^SHLVL=\|^_=' | sed 's/=.*//' | tr '\n' ' '; exit 7`)
		if out, want := readAllBounded(t, c), "one\ntwo\nthree\nin=done\nFOO HOME "; out != want {
			t.Errorf("output %q, want %q", out, want)
		}
		if st := waitStatus(t, c); st.ExitCode == nil || *st.ExitCode != 7 || st.Signal != nil {
			t.Errorf("status %+v, want exit 7", st)
		}
		c = startRemoteScript(t, &SSHTransport{Client: client}, `kill -TERM $$`)
		readAllBounded(t, c)
		if st := waitStatus(t, c); st.Signal == nil || *st.Signal != "SIGTERM" {
			t.Errorf("status %+v, want SIGTERM", st)
		}
		// The wrapper's settings do not reach the command; the agent's
		// env cannot change them.
		tr = &SSHTransport{Client: client, Env: []string{"_ahk=x", "_aht=", "ACPHOST_X=1"}}
		c = startRemoteScript(t, tr, `env | grep -c '^ACPHOST_STOP=\|^ACPHOST_KILL=\|^ACPHOST_TERMINAL=\|^ACPHOST_ENV=\|^ACPHOST_REAPER='; exit 3`)
		if out := readAllBounded(t, c); out != "0\n" {
			t.Errorf("wrapper settings in the command's environment: %q", out)
		}
		if st := waitStatus(t, c); st.ExitCode == nil || *st.ExitCode != 3 {
			t.Errorf("status %+v with the wrapper's names in Env, want exit 3", st)
		}
		// A program the host cannot find: exit 127, the shell's message.
		c = startBoundedCommand(t, &SSHTransport{Client: client, Path: "no-such-program-here"})
		if out := readAllBounded(t, c); !strings.Contains(out, "no-such-program-here") {
			t.Errorf("output for a missing program: %q", out)
		}
		if st := waitStatus(t, c); st.ExitCode == nil || *st.ExitCode != 127 {
			t.Errorf("status %+v for a missing program, want exit 127", st)
		}
	})
}

// TestSSHStartKillEndsTree: Kill ends the remote command with its child and
// grandchild at once (SIGKILL), whatever they do with SIGTERM; checked in
// the process table (the servers run on this machine).
func TestSSHStartKillEndsTree(t *testing.T) {
	sshServers(t, func(t *testing.T, client *ssh.Client) {
		dir := t.TempDir()
		c := startRemoteScript(t, &SSHTransport{Client: client, Dir: dir},
			`trap "" TERM; sh -c 'trap "" TERM; sleep 300 & echo $! > grandchild; wait' & echo $$ $! > pids; wait`)
		pids := fakebin.PidsFrom(t, filepath.Join(dir, "pids"))
		pids = append(pids, fakebin.PidsFrom(t, filepath.Join(dir, "grandchild"))...)
		c.Kill()
		if st := waitStatus(t, c); st.Signal == nil || *st.Signal != "SIGKILL" {
			t.Errorf("status after Kill %+v, want SIGKILL", st)
		}
		for _, pid := range pids {
			waitfor.Until(t, fmt.Sprintf("pid %d of the remote tree to end after Kill", pid), func() bool { return syscall.Kill(pid, 0) != nil || zombie(pid) })
		}
	})
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || strings.Contains(string(b), ") Z ")
}

// escapedChild is shell text that starts a grandchild in a session of its
// own, holding the command's output, and waits until it has written its
// pid to the file gpid (in the command's directory).
const escapedChild = `setsid sh -c 'echo $$ > gpid; exec sleep 300' & while [ ! -s gpid ]; do sleep 0.01; done`

// exiter is a command whose end can be waited for: a localCommand or a
// remoteCommand.
type exiter interface {
	Exited() <-chan struct{}
	Wait() *TerminalExitStatus
}

// waitStatus waits, bounded, for the command's exit status.
func waitStatus(t *testing.T, c exiter) *TerminalExitStatus {
	t.Helper()
	waitfor.Closed(t, c.Exited(), "the command's exit status")
	return c.Wait()
}

// readBounded reads n bytes of c's output, failing the test if they do not
// come.
func readBounded(t *testing.T, c *remoteCommand, n int) []byte {
	t.Helper()
	buf := make([]byte, n)
	var err error
	waitfor.Call(t, fmt.Sprintf("%d bytes of the remote command's output", n), func() { _, err = io.ReadFull(c, buf) })
	if err != nil {
		t.Fatalf("reading the remote command's output: %v (got %q)", err, buf)
	}
	return buf
}

// readAllBounded reads c to its end, failing the test if that takes long.
func readAllBounded(t *testing.T, c io.Reader) string {
	t.Helper()
	b, _ := readAllErr(t, c)
	return string(b)
}

// readAllErr is io.ReadAll, failing the test if the end does not come.
func readAllErr(t *testing.T, c io.Reader) ([]byte, error) {
	t.Helper()
	var (
		b   []byte
		err error
	)
	waitfor.Call(t, "the end of the command's output", func() { b, err = io.ReadAll(c) })
	return b, err
}

// TestSSHStartKillEndsDescendantsThatLeftTheSession: Kill ends a
// grandchild that left the command's session with setsid (the remote
// wrapper records the tree from /proc), the status is SIGKILL, and the
// output is the command's alone: nothing of the wrapper's.
func TestSSHStartKillEndsDescendantsThatLeftTheSession(t *testing.T) {
	sshServers(t, func(t *testing.T, client *ssh.Client) {
		dir := t.TempDir()
		c := startRemoteScript(t, &SSHTransport{Client: client, Dir: dir}, escapedChild+`; echo started; exec sleep 301`)
		gpid := fakebin.PidsFrom(t, filepath.Join(dir, "gpid"))[0]
		t.Cleanup(func() { syscall.Kill(gpid, syscall.SIGKILL) })
		buf := readBounded(t, c, len("started\n"))
		if string(buf) != "started\n" {
			t.Fatalf("read %q", buf)
		}
		c.Kill()
		if st := waitStatus(t, c); st.Signal == nil || *st.Signal != "SIGKILL" {
			t.Errorf("status after Kill %+v, want SIGKILL", st)
		}
		if rest := readAllBounded(t, c); rest != "" {
			t.Errorf("output after %q: %q, want nothing (the wrapper's words are not the command's)", buf, rest)
		}
		waitfor.Until(t, fmt.Sprintf("grandchild %d that left the session to end after Kill", gpid), func() bool { return syscall.Kill(gpid, 0) != nil || zombie(gpid) })
	})
}

// TestSSHStartStatusNotHeldByOutput: a command that exits while a
// grandchild that left its session holds the output open is reported
// exited with its code at once, and its output ends soon after.
func TestSSHStartStatusNotHeldByOutput(t *testing.T) {
	sshServers(t, func(t *testing.T, client *ssh.Client) {
		dir := t.TempDir()
		c := startRemoteScript(t, &SSHTransport{Client: client, Dir: dir}, escapedChild+`; echo bye; exit 4`)
		gpid := fakebin.PidsFrom(t, filepath.Join(dir, "gpid"))[0]
		t.Cleanup(func() { syscall.Kill(gpid, syscall.SIGKILL) })
		if st := waitStatus(t, c); st.ExitCode == nil || *st.ExitCode != 4 {
			t.Errorf("status %+v, want exit 4", st)
		}
		if out := readAllBounded(t, c); out != "bye\n" {
			t.Errorf("output %q, want %q", out, "bye\n")
		}
	})
}
