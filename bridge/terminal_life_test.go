package bridge

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/internal/fakebin"
	"github.com/acphost/acphost/internal/waitfor"
)

// treeScript starts a child shell with a grandchild (both in the
// command's process group), writes "LEADER CHILD" to pids and the
// grandchild's pid to grandchild, and becomes a long sleep.
const treeScript = `sh -c 'sleep 300 & echo $! > grandchild; wait' & echo $$ $! > pids; exec sleep 301`

// procAlive reports whether pid is in the process table and not a zombie.
func procAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(b), ") Z ")
}

// procGroup lists the live processes of group pgid in /proc.
func procGroup(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // state, ppid, pgrp, …
		if len(fields) > 2 && fields[2] == strconv.Itoa(pgid) && fields[0] != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// runningTree waits for the tree of treeScript started in dir and returns
// its processes: the command, its child, the grandchild and the command's
// parent (its reaper, locally and remotely).
func runningTree(t *testing.T, dir string) []int {
	t.Helper()
	pids := fakebin.PidsFrom(t, filepath.Join(dir, "pids"))
	grandchild := fakebin.PidsFrom(t, filepath.Join(dir, "grandchild"))[0]
	group := procGroup(pids[0])
	if len(group) < 3 {
		t.Fatalf("group %d has %v, want the command, its child and grandchild %d", pids[0], group, grandchild)
	}
	for _, pid := range append(pids, grandchild) {
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	}
	return append(group, pids[1], grandchild, procParent(pids[0]))
}

// waitAllGone waits, bounded, until none of pids is running.
func waitAllGone(t *testing.T, pids []int, why string) {
	t.Helper()
	for _, pid := range pids {
		for deadline := time.Now().Add(10 * time.Second); procAlive(pid); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("after %s, pid %d of the terminal's tree is still running", why, pid)
			}
		}
	}
}

// TestTerminalEndsOfLife: a command with a grandchild is gone, with its
// whole process group and its reaper, after each end of its life: kill, release while it runs,
// closing its session, closing the bridge, the agent's death, and on an SSH
// host the connection dropping (the host's death, for the terminal).
func TestTerminalEndsOfLife(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks the process table through /proc")
	}
	exit := 3
	eachRunner(t, func(t *testing.T, r termRunner) {
		for _, tt := range []struct {
			name  string
			steps []acptest.Step                        // turn "end"
			end   func(f *termFixture, dropHost func()) // or this
			want  string                                // a report of turn "end"
		}{
			{name: "kill", steps: []acptest.Step{onTerminal("terminal/kill", "term-1"), onTerminal("terminal/wait_for_exit", "term-1")},
				want: `request terminal/wait_for_exit: result {"signal":"SIGKILL"}`},
			{name: "release", steps: []acptest.Step{onTerminal("terminal/release", "term-1"), onTerminal("terminal/output", "term-1")},
				want: `request terminal/output: error -32602 terminal "term-1" of session "sess_1" is unknown or was released`},
			{name: "session close", end: func(f *termFixture, _ func()) { f.s.Close(context.Background()) }},
			{name: "bridge close", end: func(f *termFixture, _ func()) { f.b.Close() }},
			{name: "agent death", steps: []acptest.Step{{Exit: &exit}}},
			{name: "host death", end: func(_ *termFixture, dropHost func()) { dropHost() }},
		} {
			t.Run(tt.name, func(t *testing.T) {
				opts, dropHost := r.setup(t)
				if tt.name == "host death" && dropHost == nil {
					t.Skip("this runner's host is this process (see acpclient's host-death tests)")
				}
				script := acptest.Script{Prompts: []acptest.Turn{
					{Match: "start", Steps: []acptest.Step{shell(treeScript)}},
					{Match: "end", Steps: tt.steps},
				}}
				f := newTermFixture(t, script, Policy{Mode: ModeBuild}, opts)
				f.prompt(t, "start")
				tree := runningTree(t, f.dir)
				if tt.end != nil {
					tt.end(f, dropHost)
				} else {
					f.s.Prompt(waitfor.Context(t), acpclient.TextBlock("end")) // the agent's death fails it
				}
				if tt.want != "" {
					f.report(tt.want)
				}
				waitAllGone(t, tree, tt.name)
				f.rec.waitFor("exit event", func(ev Event) bool { return ev.Kind == KindTerminal && ev.Terminal.Exit != nil })
			})
		}
	})
}

// TestTerminalWaitDoesNotHoldTheConnection: while one session's agent
// waits for a command's exit, the connection serves another session; the
// wait is answered when closing the session ends the command.
func TestTerminalWaitDoesNotHoldTheConnection(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{
		{Match: "wait", Steps: []acptest.Step{shell(`exec sleep 300`), onTerminal("terminal/wait_for_exit", "term-1")}},
		{Steps: []acptest.Step{{Text: "still served"}}},
	}}
	// The close must come after the agent's wait reached the bridge: the
	// transport tells when its line has been read, and the other session's
	// turn, read after it, is dispatched after it.
	sniff := &sniffTransport{Transport: &acptest.Transport{Script: script}, needle: []byte(`"terminal/wait_for_exit"`), seen: make(chan struct{})}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), Config{ID: "term", Transport: sniff, Terminals: &terminal.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: dir, Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	f := &termFixture{h: h, rec: rec, b: b, s: s, dir: dir}
	waiting := make(chan error, 1)
	go func() {
		_, err := f.s.Prompt(waitfor.Context(t), acpclient.TextBlock("wait"))
		waiting <- err
	}()
	select {
	case <-sniff.seen:
	case <-time.After(30 * time.Second):
		t.Fatal("the agent never asked terminal/wait_for_exit")
	}
	other, err := f.b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: f.dir, Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Prompt(waitfor.Context(t), acpclient.TextBlock("hello")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-waiting:
	case <-ctx.Done():
		t.Fatal("the waiting turn did not end")
	}
	f.report(`request terminal/wait_for_exit: result {"signal":"SIGKILL"}`)
}

// sniffTransport closes seen once the agent's output, as the bridge reads
// it, has contained needle (also split across reads).
type sniffTransport struct {
	*acptest.Transport
	needle []byte
	seen   chan struct{}
	once   sync.Once
}

func (s *sniffTransport) Connect(ctx context.Context) (io.ReadWriteCloser, error) {
	rwc, err := s.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &sniffStream{ReadWriteCloser: rwc, t: s}, nil
}

type sniffStream struct {
	io.ReadWriteCloser
	t    *sniffTransport
	tail []byte // the end of the previous read, for a needle split across reads
}

func (s *sniffStream) Read(p []byte) (int, error) {
	n, err := s.ReadWriteCloser.Read(p)
	window := append(s.tail, p[:n]...)
	if bytes.Contains(window, s.t.needle) {
		s.t.once.Do(func() { close(s.t.seen) })
	}
	s.tail = append(s.tail[:0], window[max(0, len(window)-len(s.t.needle)+1):]...)
	return n, err
}
