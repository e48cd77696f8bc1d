//go:build linux

package acpclient

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/waitfor"
)

// statOf returns the fields of /proc/PID/stat after the command name:
// [0] is the state (field 3), [2] the process group (field 5), [19] the
// start time (field 22). Nil when the process is not in the table.
func statOf(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	i := bytes.LastIndexByte(b, ')')
	if err != nil || i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// statusField returns a line of /proc/PID/status, without its name.
func statusField(t *testing.T, pid int, name string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in /proc/%d/status", name, pid)
	return ""
}

// startCat starts cat as an agent, with its sentinel; one that ignores
// SIGTERM when asked.
func startCat(t *testing.T, ignoreTERM bool) *process {
	t.Helper()
	tr := Command("/bin/cat")
	if ignoreTERM {
		tr = Command("/bin/sh", "-c", `trap "" TERM; exec cat`)
	}
	tr.noReaper = true // the sentinel guards agents without one
	rwc, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := rwc.(*process)
	t.Cleanup(func() { p.Close() })
	if p.stop.guard == nil {
		t.Fatal("the agent has no sentinel")
	}
	return p
}

// echo checks that the agent still answers.
func echo(t *testing.T, p *process) {
	t.Helper()
	if _, err := p.Write([]byte("ping\n")); err != nil {
		t.Fatalf("write to the agent: %v", err)
	}
	buf := make([]byte, 5)
	if n, err := p.Read(buf); err != nil || string(buf[:n]) != "ping\n" {
		t.Fatalf("the agent did not answer: %q, %v", buf[:n], err)
	}
}

// TestSentinelSitsInTheAgentsGroup: the sentinel is a member of the agent's
// process group, not of ours (where a terminal's Ctrl-C lands), and ignores
// the signals a terminal, a hang-up or our own stop sequence send. Logs its
// resident memory, the cost of one per agent.
func TestSentinelSitsInTheAgentsGroup(t *testing.T) {
	p := startCat(t, true)
	pid := p.stop.guard.pid()
	// Until sh has run its trap, SigIgn holds only what it inherited (a
	// host run under nohup ignores SIGHUP already): wait for every signal.
	ignored := []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGPIPE, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGTSTP}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		ign, _ := strconv.ParseUint(statusField(t, pid, "SigIgn"), 16, 64)
		var missing []syscall.Signal
		for _, sig := range ignored {
			if ign&(1<<(sig-1)) == 0 {
				missing = append(missing, sig)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sentinel does not ignore %v (SigIgn %x)", missing, ign)
		}
	}
	st := statOf(pid)
	if st == nil || st[2] != strconv.Itoa(p.Pid()) || st[2] == strconv.Itoa(syscall.Getpgrp()) {
		t.Fatalf("sentinel stat %v: want process group %d (the agent's), not ours (%d)", st, p.Pid(), syscall.Getpgrp())
	}
	t.Logf("sentinel VmRSS %s, of which RssAnon %s", statusField(t, pid, "VmRSS"), statusField(t, pid, "RssAnon"))
	// The agent too must have run its trap, or the SIGTERM ends it (a
	// loaded machine showed the race).
	waitfor.Until(t, "the agent to ignore SIGTERM", func() bool {
		ign, _ := strconv.ParseUint(statusField(t, p.Pid(), "SigIgn"), 16, 64)
		return ign&(1<<(syscall.SIGTERM-1)) != 0
	})
	// Our SIGTERM step reaches the whole group: the sentinel stays.
	if err := syscall.Kill(-p.Pid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	echo(t, p)
	select {
	case <-p.stop.guard.done:
		t.Fatal("SIGTERM to the group ended the sentinel")
	default:
	}
}

// TestStopReapsTheSentinel: however the agent stops, once Close returns the
// sentinel is not in the process table, not even as a zombie.
func TestStopReapsTheSentinel(t *testing.T) {
	cases := []struct {
		name, script string
		// early: the agent may be gone, and its sentinel with it, before
		// the test looks (on a loaded machine it often is).
		early bool
	}{
		{"Close", `exec cat`, false},
		{"the agent exits on its own", `exit 0`, true},
		{"the agent ignores SIGTERM", `trap "" TERM; while :; do sleep 0.02; done`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := &CommandTransport{Path: "/bin/sh", Args: []string{"-c", tc.script},
				StopTimeout: 20 * time.Millisecond, KillTimeout: 20 * time.Millisecond, noReaper: true}
			c, err := Connect(context.Background(), tr, newRecorder(), nil)
			if err != nil {
				t.Fatal(err)
			}
			p := c.rwc.(*process)
			if p.stop.guard == nil {
				t.Fatal("the agent has no sentinel")
			}
			pid := p.stop.guard.pid()
			st := statOf(pid)
			if st == nil && !tc.early {
				t.Fatal("no sentinel in the process table")
			}
			c.Close()
			select {
			case <-p.stop.guard.done:
			default:
				t.Fatal("Close returned before the sentinel was reaped")
			}
			waitDone(t, c)
			if now := statOf(pid); now != nil && (st == nil || now[19] == st[19]) {
				t.Fatalf("sentinel %d left behind in state %s", pid, now[0])
			}
		})
	}
}

// TestKilledSentinelLeavesTheAgentRunning: a sentinel that someone kills
// takes only its protection with it; it is reaped, and the agent goes on.
func TestKilledSentinelLeavesTheAgentRunning(t *testing.T) {
	p := startCat(t, false)
	pid := p.stop.guard.pid()
	if err := killPid(pid); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.stop.guard.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the killed sentinel was not reaped")
	}
	if st := statOf(pid); st != nil && st[0] == "Z" {
		t.Fatalf("the killed sentinel %d is a zombie", pid)
	}
	echo(t, p)
	select {
	case <-p.Exited():
		t.Fatal("the agent exited with its sentinel")
	default:
	}
	p.Close()
}

// TestSentinelPipeStaysOurs: the write end of the sentinel's stdin is held
// by this process alone; no agent or other child started afterwards has it,
// or a host death would not reach the sentinel.
func TestSentinelPipeStaysOurs(t *testing.T) {
	first := startCat(t, false)
	var fd uintptr
	rc, err := first.stop.guard.guard.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(f uintptr) { fd = f })
	pipe, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd)))
	if err != nil || !strings.HasPrefix(pipe, "pipe:") {
		t.Fatalf("guard fd %d is %q, %v", fd, pipe, err)
	}
	second := startCat(t, false)
	holders := func(pid int) []string {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd"
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var fds []string
		for _, e := range entries {
			if l, _ := os.Readlink(filepath.Join(dir, e.Name())); l == pipe {
				fds = append(fds, e.Name())
			}
		}
		return fds
	}
	for what, pid := range map[string]int{"the first agent": first.Pid(), "a later agent": second.Pid(), "a later sentinel": second.stop.guard.pid()} {
		if fds := holders(pid); len(fds) > 0 {
			t.Errorf("%s holds the sentinel's pipe as fds %v", what, fds)
		}
	}
	// The sentinel itself has only the read end, as its stdin.
	if fds := holders(first.stop.guard.pid()); !slices.Equal(fds, []string{"0"}) {
		t.Errorf("the sentinel holds its pipe as fds %v, want only 0", fds)
	}
	echo(t, first)
}

// TestNoSentinel: NoSentinel leaves the agent alone in its group.
func TestNoSentinel(t *testing.T) {
	rwc, err := (&CommandTransport{Path: "/bin/cat", NoSentinel: true, noReaper: true}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := rwc.(*process)
	defer p.Close()
	group := strconv.Itoa(p.Pid())
	for _, e := range scanProcs() {
		if st := statOf(e.pid); st != nil && st[2] == group && e.pid != p.Pid() {
			t.Errorf("process %d shares the agent's group", e.pid)
		}
	}
	echo(t, p)
}

// TestSentinelWithoutShell: without /bin/sh there is no sentinel, only an
// error naming what failed, and nothing left open.
func TestSentinelWithoutShell(t *testing.T) {
	fds := func() int { e, _ := os.ReadDir("/proc/self/fd"); return len(e) }
	before := fds()
	s, err := startSentinel("/nonexistent/sh", syscall.Getpgrp())
	if s != nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "sentinel") {
		t.Fatalf("startSentinel without a shell: %v, %v", s, err)
	}
	if after := fds(); after != before {
		t.Errorf("%d descriptors open before, %d after", before, after)
	}
}
