package acpclient

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// wrapperProcs returns the pids of the remote wrapper and of the jobs it
// forked (same command line: the wrapper's text), for the command whose
// command line holds marker, by reading /proc (the servers run here).
func wrapperProcs(marker string) []int {
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []int
	for _, p := range paths {
		b, err := os.ReadFile(p)
		args := strings.Split(string(b), "\x00")
		if err != nil || len(args) < 3 || !strings.HasPrefix(args[2], `trap "" PIPE HUP`) || !strings.Contains(string(b), marker) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		pids = append(pids, pid)
	}
	return pids
}

// recorderOf waits, bounded, for the wrapper's descendant recorder of the
// command whose command line holds marker: the wrapper's job that has no
// fd 3 (the stdin reader keeps the session's stdin there; the recorder
// starts after the wrapper closed it).
func recorderOf(t *testing.T, marker string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		procs := wrapperProcs(marker)
		in := map[int]bool{}
		for _, pid := range procs {
			in[pid] = true
		}
		for _, pid := range procs {
			_, err := os.Stat("/proc/" + strconv.Itoa(pid) + "/fd/3")
			if in[parentOf(pid)] && os.IsNotExist(err) && !zombie(pid) {
				return pid
			}
		}
	}
	t.Fatalf("no descendant recorder for the command marked %s", marker)
	return 0
}

// parentOf is pid's parent, from /proc (0 when it is gone).
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// TestSSHStartExitNotHeldByDeadRecorder: the wrapper's descendant recorder
// ending by a signal (as it does when the command exits so soon that the
// wrapper's TERM reaches the recorder before its trap is set) does not hold
// the wrapper: the command's exit status arrives. dash's wait reports a
// reaped job's status again on every call, so a wait loop that retried on
// a status above 128 spun for ever.
func TestSSHStartExitNotHeldByDeadRecorder(t *testing.T) {
	sshServers(t, func(t *testing.T, client *ssh.Client) {
		dir := t.TempDir()
		fifo := filepath.Join(dir, "go")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		// The recorder runs only without the remote reaper.
		c := startRemoteScript(t, &SSHTransport{Client: client, Dir: dir, noReaper: true}, `echo ready; read x <`+fifo+`; exit 6`)
		readBounded(t, c, len("ready\n"))
		rec := recorderOf(t, fifo)
		if err := syscall.Kill(rec, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fifo, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if st := waitStatus(t, c); st.ExitCode == nil || *st.ExitCode != 6 {
			t.Errorf("status %+v, want exit 6", st)
		}
	})
}

// TestSSHStartKillAtOnce: a command killed right after it started, while
// the wrapper is still setting up (the end of stdin is seen before the
// wrapper waits for the command), is killed then, with SIGKILL, not left
// running until the channel is hung up.
func TestSSHStartKillAtOnce(t *testing.T) {
	sshServers(t, func(t *testing.T, client *ssh.Client) {
		for i := range 3 {
			c := startRemoteScript(t, &SSHTransport{Client: client}, `exec sleep 307`)
			c.Kill()
			if st := waitStatus(t, c); st.Signal == nil || *st.Signal != "SIGKILL" {
				t.Fatalf("run %d: status after an immediate Kill %+v, want SIGKILL", i, st)
			}
		}
	})
}
