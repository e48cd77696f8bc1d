package acpclient

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/acphost/acphost/internal/sshtest"
	"github.com/acphost/acphost/internal/waitfor"
)

// TestSSHStartEndsOrphanedDaemons: on an SSH host with python3, a daemon a
// remote terminal command started, which left its session and whose
// parent is gone, is ended with the command: when the command has already
// exited, when it is killed, when it is closed, when the connection is
// lost (the app's death, as the host sees it). The hosts are this machine,
// so /proc shows them.
func TestSSHStartEndsOrphanedDaemons(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks the process table through /proc")
	}
	sshServers(t, func(t *testing.T, client *ssh.Client) {
		cases := []struct {
			name, script string
			end          func(RunningCommand)
		}{
			{"exited at once", orphanDaemon, func(c RunningCommand) { c.Wait() }},
			{"killed", orphanDaemon + "; exec sleep 300", func(c RunningCommand) { c.Kill(); c.Wait() }},
			{"closed", orphanDaemon + "; exec sleep 300", func(c RunningCommand) { c.Close() }},
			// The app's death, as the host sees it: the connection is gone
			// (last: it ends the client).
			{"connection lost", orphanDaemon + "; exec sleep 300", func(c RunningCommand) { client.Close(); c.Wait() }},
		}
		for _, tc := range cases {
			c := startRemoteScript(t, &SSHTransport{Client: client}, tc.script)
			daemon := readPid(t, c)
			t.Cleanup(func() { _ = killPid(daemon) }) // should it survive
			if why := c.Uncontained(); why != "" {
				t.Errorf("%s: uncontained with python3 on the host: %s", tc.name, why)
			}
			tc.end(c)
			waitGone(t, daemon, tc.name+": the daemon of a remote command")
		}
	})
}

// TestSSHStartWithoutReaperSaysSo: without the remote reaper (as on a host
// without python3) a terminal command says why its processes cannot all be
// accounted for.
func TestSSHStartWithoutReaperSaysSo(t *testing.T) {
	sshServers(t, func(t *testing.T, client *ssh.Client) {
		c := startRemoteScript(t, &SSHTransport{Client: client, noReaper: true}, "exit 0")
		io.ReadAll(c)
		if why := c.Uncontained(); !strings.Contains(why, "python3") {
			t.Errorf("Uncontained() = %q, want that the host has no python3", why)
		}
	})
}

// BenchmarkSSHStartRelease measures a remote terminal command from Start to
// its release (output read to the end, Close), for true, on the in-process
// SSH server: under the remote reaper (python3) and without it (the
// wrapper's recorder instead). The ratio of the two lines is the reaper's
// cost per command.
func BenchmarkSSHStartRelease(b *testing.B) {
	client := sshtest.Start(b, nil).Dial(b)
	for _, mode := range []struct {
		name     string
		noReaper bool
	}{{"reaper", false}, {"plain", true}} {
		b.Run(mode.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c, err := (&SSHTransport{Client: client, Path: "true", noReaper: mode.noReaper}).Start(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, c); err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
}

// TestSSHAgentEndsOrphanedDaemons: an agent on an SSH host with python3
// runs under the remote reaper too, so a daemon it started, which left its
// session and whose parent is gone, ends with the agent: when the agent is
// closed (stdin's end, then the stop sequence), when it is closed while it
// ignores both (the kill step ends the whole tree), and when the
// connection is lost. The hosts are this machine, so /proc shows them.
func TestSSHAgentEndsOrphanedDaemons(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks the process table through /proc")
	}
	sshServers(t, func(t *testing.T, client *ssh.Client) {
		cases := []struct {
			name, script string
			end          func(io.ReadWriteCloser)
		}{
			{"closed", agentDaemonScript, func(a io.ReadWriteCloser) { a.Close() }},
			{"stubborn", orphanDaemon + `; trap "" TERM; while :; do sleep 1; done`, func(a io.ReadWriteCloser) { a.Close() }},
			// The app's death, as the host sees it (last: it ends the client).
			{"connection lost", agentDaemonScript, func(io.ReadWriteCloser) { client.Close() }},
		}
		for _, tc := range cases {
			tr := &SSHTransport{Client: client, Path: "sh", Args: []string{"-c", tc.script}, StopTimeout: time.Second, KillTimeout: time.Second}
			agent, err := tr.Connect(waitfor.Context(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { waitfor.Call(t, "closing the remote agent", func() { agent.Close() }) })
			daemon := readPidBounded(t, agent)
			t.Cleanup(func() { _ = killPid(daemon) }) // should it survive
			tc.end(agent)
			waitGone(t, daemon, tc.name+": the daemon of a remote agent")
		}
	})
}

// TestSSHAgentStopIsPoliteUnderReaper: under the remote reaper an agent
// still gets SIGTERM, and its own handler runs, before anything is killed.
func TestSSHAgentStopIsPoliteUnderReaper(t *testing.T) {
	sshServers(t, func(t *testing.T, client *ssh.Client) {
		said := filepath.Join(t.TempDir(), "said")
		script := `trap "echo term > ` + said + `; exit 0" TERM; echo $$; while :; do sleep 1; done`
		tr := &SSHTransport{Client: client, Path: "sh", Args: []string{"-c", script}, StopTimeout: time.Second, KillTimeout: 30 * time.Second}
		agent, err := tr.Connect(waitfor.Context(t))
		if err != nil {
			t.Fatal(err)
		}
		readPidBounded(t, agent)
		waitfor.Call(t, "closing the remote agent", func() { agent.Close() })
		if b, err := os.ReadFile(said); err != nil || string(b) != "term\n" {
			t.Errorf("the agent's TERM handler wrote %q (%v), want it to have run", b, err)
		}
	})
}

// readPidBounded is readPid with a bound on the wait for the line.
func readPidBounded(t *testing.T, r io.Reader) int {
	t.Helper()
	var line string
	var err error
	waitfor.Call(t, "a pid on the remote agent's stdout", func() { line, err = bufio.NewReader(r).ReadString('\n') })
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil || pid <= 0 {
		t.Fatalf("the agent printed %q (%v), want a pid", line, err)
	}
	return pid
}
