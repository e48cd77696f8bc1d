package bridge

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
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

// waitPidFile waits, bounded, for a file of pids the command writes.
func waitPidFile(t *testing.T, path string) []int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			var pids []int
			for _, f := range strings.Fields(string(b)) {
				pid, _ := strconv.Atoi(f)
				pids = append(pids, pid)
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not written", path)
		}
	}
}

// runningTree waits for the tree of treeScript started in dir and returns
// its processes: the command, its child, the grandchild and the sentinel.
func runningTree(t *testing.T, dir string) []int {
	t.Helper()
	pids := waitPidFile(t, filepath.Join(dir, "pids"))
	grandchild := waitPidFile(t, filepath.Join(dir, "grandchild"))[0]
	group := procGroup(pids[0])
	if len(group) < 4 {
		t.Fatalf("group %d has %v, want the command, its child, grandchild %d and the sentinel", pids[0], group, grandchild)
	}
	for _, pid := range append(pids, grandchild) {
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	}
	return append(group, pids[1], grandchild)
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
// whole process group and sentinel, after each end of its life: kill,
// release while it runs, closing its session, closing the bridge, the
// agent's death.
func TestTerminalEndsOfLife(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks the process table through /proc")
	}
	exit := 3
	for _, tt := range []struct {
		name  string
		steps []acptest.Step       // turn "end"
		end   func(f *termFixture) // or this
		want  string               // a report of turn "end"
	}{
		{name: "kill", steps: []acptest.Step{onTerminal("terminal/kill", "term-1"), onTerminal("terminal/wait_for_exit", "term-1")},
			want: `request terminal/wait_for_exit: result {"signal":"SIGKILL"}`},
		{name: "release", steps: []acptest.Step{onTerminal("terminal/release", "term-1"), onTerminal("terminal/output", "term-1")},
			want: `request terminal/output: error -32602 terminal "term-1" of session "sess_1" is unknown or was released`},
		{name: "session close", end: func(f *termFixture) { f.s.Close(context.Background()) }},
		{name: "bridge close", end: func(f *termFixture) { f.b.Close() }},
		{name: "agent death", steps: []acptest.Step{{Exit: &exit}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			script := acptest.Script{Prompts: []acptest.Turn{
				{Match: "start", Steps: []acptest.Step{shell(treeScript)}},
				{Match: "end", Steps: tt.steps},
			}}
			f := newTermFixture(t, script, Policy{Mode: ModeBuild}, nil)
			f.prompt(t, "start")
			tree := runningTree(t, f.dir)
			if tt.end != nil {
				tt.end(f)
			} else {
				f.s.Prompt(context.Background(), acpclient.TextBlock("end")) // the agent's death fails it
			}
			if tt.want != "" {
				f.report(tt.want)
			}
			waitAllGone(t, tree, tt.name)
			f.rec.waitFor("exit event", func(ev Event) bool { return ev.Kind == KindTerminal && ev.Terminal.Exit != nil })
		})
	}
}

// TestTerminalWaitDoesNotHoldTheConnection: while one session's agent
// waits for a command's exit, the connection serves another session; the
// wait is answered when closing the session ends the command.
func TestTerminalWaitDoesNotHoldTheConnection(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{
		{Match: "wait", Steps: []acptest.Step{shell(`exec sleep 300`), onTerminal("terminal/wait_for_exit", "term-1")}},
		{Steps: []acptest.Step{{Text: "still served"}}},
	}}
	f := newTermFixture(t, script, Policy{Mode: ModeBuild}, nil)
	waiting := make(chan error, 1)
	go func() {
		_, err := f.s.Prompt(context.Background(), acpclient.TextBlock("wait"))
		waiting <- err
	}()
	f.rec.waitFor("create", func(ev Event) bool {
		return ev.Kind == KindText && strings.HasPrefix(ev.Text, "request terminal/create: result")
	})
	other, err := f.b.OpenSession(context.Background(), SessionConfig{Cwd: f.dir, Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Prompt(context.Background(), acpclient.TextBlock("hello")); err != nil {
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
