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
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/internal/fakebin"
	"github.com/acphost/acphost/internal/waitfor"
)

// escapeScript starts a grandchild that leaves the command's process group
// and session (setsid), holding its output, writes the grandchild's pid to
// escaped, says "started" and becomes a long sleep. The grandchild's
// command line carries marker (see sleepMarker).
func escapeScript(marker string) string {
	return `setsid sh -c 'echo $$ > escaped; exec sleep ` + marker + `' 2>/dev/null & while [ ! -s escaped ]; do sleep 0.01; done; echo started; exec sleep 303`
}

// sleepMarker is a duration for sleep, about five minutes, whose digits
// are unique to the test: the mark of its process in /proc.
func sleepMarker() string {
	return "300." + strconv.FormatInt(time.Now().UnixNano()%1e9, 10) + "1"
}

// escapedGrandchild waits for the grandchild of escapeScript, checks in
// /proc that it left the command's session and carries marker, and
// returns its pid.
func escapedGrandchild(t *testing.T, dir, marker string) int {
	t.Helper()
	pid := fakebin.PidsFrom(t, filepath.Join(dir, "escaped"))[0]
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	// The pid file is written before the exec; wait for the marked sleep.
	for deadline := time.Now().Add(waitfor.Bound); !strings.Contains(cmdline(pid), marker); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for pid %d to run the marked sleep: it runs %q", waitfor.Bound, pid, cmdline(pid))
		}
	}
	if sid, psid := sessionOf(pid), sessionOf(procParent(pid)); sid != pid || sid == psid {
		t.Fatalf("grandchild %d is in session %d (its parent's: %d), want one of its own", pid, sid, psid)
	}
	return pid
}

// waitMarkedGone waits, bounded, until no process whose command line
// carries marker is left: an end that does not wait for the command
// (release) returns while the remote wrapper and its jobs, whose arguments
// hold the command, are still on their way out.
func waitMarkedGone(t *testing.T, marker, why string) {
	t.Helper()
	for deadline := time.Now().Add(waitfor.Bound); ; time.Sleep(5 * time.Millisecond) {
		pids := agentPids(t, marker)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, processes marked %s still in /proc after %v: %v", why, marker, waitfor.Bound, pids)
		}
	}
}

func cmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// statField returns field n (1-based, as proc(5) counts) of /proc/PID/stat.
func statField(pid, n int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < n-2 {
		return -1
	}
	v, _ := strconv.Atoi(fields[n-3])
	return v
}

func procParent(pid int) int { return statField(pid, 4) }
func sessionOf(pid int) int  { return statField(pid, 6) }

// TestTerminalEndsEscapedGrandchild: a grandchild that left the command's
// process group and session with setsid is gone after each end of the
// command's life (kill, release, session close, bridge close, the agent's
// death), locally and on SSH hosts, and the agent's wait is answered.
func TestTerminalEndsEscapedGrandchild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks the process table through /proc")
	}
	exit := 3
	eachRunner(t, func(t *testing.T, r termRunner) {
		for _, tt := range []struct {
			name  string
			steps []acptest.Step
			end   func(f *termFixture)
			want  string
		}{
			{name: "kill", steps: []acptest.Step{onTerminal("terminal/kill", "term-1"), onTerminal("terminal/wait_for_exit", "term-1")},
				want: `request terminal/wait_for_exit: result {"signal":"SIGKILL"}`},
			{name: "release", steps: []acptest.Step{onTerminal("terminal/release", "term-1")}},
			{name: "session close", end: func(f *termFixture) { f.s.Close(waitfor.Context(t)) }},
			{name: "bridge close", end: func(f *termFixture) { waitfor.Call(t, "the bridge to close", func() { f.b.Close() }) }},
			{name: "agent death", steps: []acptest.Step{{Exit: &exit}}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				marker := sleepMarker()
				script := acptest.Script{Prompts: []acptest.Turn{
					{Match: "start", Steps: []acptest.Step{shell(escapeScript(marker)), onTerminal("terminal/output", "term-1")}},
					{Match: "end", Steps: tt.steps},
				}}
				f := newTermFixture(t, script, Policy{Mode: ModeBuild}, r.opts(t))
				f.prompt(t, "start")
				escaped := escapedGrandchild(t, f.dir, marker)
				if tt.end != nil {
					tt.end(f)
				} else {
					f.s.Prompt(waitfor.Context(t), acpclient.TextBlock("end")) // the agent's death fails it
				}
				if tt.want != "" {
					f.report(tt.want)
				}
				waitAllGone(t, []int{escaped}, tt.name)
				waitMarkedGone(t, marker, tt.name)
				f.rec.waitFor("exit event", func(ev Event) bool { return ev.Kind == KindTerminal && ev.Terminal.Exit != nil })
			})
		}
	})
}

// TestTerminalExitNotHeldByEscapedOutput: a command that exits while a
// grandchild that left its session holds its output open is reported
// exited (terminal/wait_for_exit answers with its code), locally and on
// SSH hosts, and its output is the command's alone.
func TestTerminalExitNotHeldByEscapedOutput(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks the process table through /proc")
	}
	eachRunner(t, func(t *testing.T, r termRunner) {
		marker := sleepMarker()
		script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
			// The command exits only once the grandchild runs the marked
			// sleep: a reaper ends it right after the exit, so the test
			// cannot look for it then.
			shell(`setsid sh -c 'echo $$ > escaped; exec sleep ` + marker + `' 2>/dev/null & while [ ! -s escaped ] || ! grep -q ` + marker + ` /proc/$(cat escaped)/cmdline 2>/dev/null; do sleep 0.01; done; echo started; exit 5`),
			onTerminal("terminal/wait_for_exit", "term-1"),
			onTerminal("terminal/output", "term-1"),
		}}}}
		f := newTermFixture(t, script, Policy{Mode: ModeBuild}, r.opts(t))
		done := make(chan error, 1)
		go func() { _, err := f.s.Prompt(waitfor.Context(t), acpclient.TextBlock("go")); done <- err }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("terminal/wait_for_exit was not answered while the grandchild holds the output")
		}
		if pid := fakebin.PidsFrom(t, filepath.Join(f.dir, "escaped"))[0]; pid > 0 {
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) }) // where no reaper ended it
		}
		f.report(`request terminal/wait_for_exit: result {"exitCode":5}`)
		f.report(`request terminal/output: result {"output":"started\n","truncated":false,"exitStatus":{"exitCode":5}}`)
	})
}

// TestTerminalShutdownNotHeldByEscapedOutput: the host shuts down, bounded,
// while a terminal's grandchild that escaped before it could be recorded
// (a double fork) holds the output open, locally and on SSH hosts.
func TestTerminalShutdownNotHeldByEscapedOutput(t *testing.T) {
	eachRunner(t, func(t *testing.T, r termRunner) {
		dir := t.TempDir()
		script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
			shell(`(setsid sh -c 'echo $$ > ` + dir + `/escaped; exec sleep 305' 2>/dev/null &); while [ ! -s ` + dir + `/escaped ]; do sleep 0.01; done; echo started; exec sleep 306`),
			onTerminal("terminal/output", "term-1"),
		}}}}
		f := newTermFixture(t, script, Policy{Mode: ModeBuild}, r.opts(t))
		f.prompt(t, "go")
		pid := fakebin.PidsFrom(t, filepath.Join(dir, "escaped"))[0]
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		shut := make(chan error, 1)
		go func() { shut <- f.h.Shutdown(ctx) }()
		select {
		case <-shut:
		case <-time.After(40 * time.Second):
			t.Fatal("Host.Shutdown did not return while an escaped grandchild holds a terminal's output")
		}
	})
}

// TestTerminalCreateErrorCodes: environment variables no runner can set
// are invalid params (-32602) on every runner, before anything runs; a
// program missing locally is resource not found (-32002) saying "program
// not found" (an SSH host reports exit 127).
func TestTerminalCreateErrorCodes(t *testing.T) {
	eachRunner(t, func(t *testing.T, r termRunner) {
		for _, tt := range []struct {
			name, env string
		}{
			{"empty name", `[{"name":"","value":"x"}]`},
			{"name with =", `[{"name":"A=B","value":"x"}]`},
			{"name with NUL", `[{"name":"A\u0000B","value":"x"}]`},
			{"value with NUL", `[{"name":"A","value":"x\u0000y"}]`},
		} {
			t.Run(tt.name, func(t *testing.T) {
				script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
					{Terminal: &acptest.Terminal{Command: "echo", Args: []string{"ran"}, Env: []byte(tt.env)}},
				}}}}
				f := newTermFixture(t, script, Policy{Mode: ModeBuild}, r.opts(t))
				f.prompt(t, "run")
				if got, want := f.report("terminal:"), "terminal: terminal/create error -32602 terminal/create: environment variable"; !strings.HasPrefix(got, want) {
					t.Errorf("got  %s\nwant %s…", got, want)
				}
			})
		}
		t.Run("missing program", func(t *testing.T) {
			script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
				{Terminal: &acptest.Terminal{Command: "no-such-program-here"}},
			}}}}
			f := newTermFixture(t, script, Policy{Mode: ModeBuild}, r.opts(t))
			f.prompt(t, "run")
			got := f.report("terminal:")
			want := "terminal: terminal/create error -32002 running no-such-program-here: program not found:"
			if r.name != "local" {
				want = "terminal: exit 127"
			}
			if !strings.HasPrefix(got, want) || strings.Contains(got, "agent binary") {
				t.Errorf("got  %s\nwant %s…", got, want)
			}
		})
	})
}

// orphanScript starts a daemon that leaves the command's process group and
// session and whose parent exits at once, writes its pid to daemon, says
// "started" and then, with then, either exits or goes on running. The
// daemon's command line carries marker.
func orphanScript(marker, then string) string {
	return `sh -c 'setsid sh -c "echo \$\$ > daemon; exec sleep ` + marker + `" >/dev/null 2>&1 </dev/null &'; while [ ! -s daemon ]; do sleep 0.01; done; echo started; ` + then
}

// TestTerminalEndsOrphanedDaemon: a daemon whose parent exited at once, so
// that nothing links it to the command any more, is gone after
// terminal/release, whether the command had already exited or was still
// running, and after terminal/kill, locally and on SSH hosts (python3
// there); the exit event says nothing is uncontained.
func TestTerminalEndsOrphanedDaemon(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks the process table through /proc")
	}
	eachRunner(t, func(t *testing.T, r termRunner) {
		for _, tc := range []struct {
			then string
			end  []acptest.Step
		}{
			{"exit 0", []acptest.Step{onTerminal("terminal/release", "term-1")}},
			{"exec sleep 303", []acptest.Step{onTerminal("terminal/release", "term-1")}},
			{"exec sleep 303", []acptest.Step{onTerminal("terminal/kill", "term-1"), onTerminal("terminal/wait_for_exit", "term-1")}},
		} {
			then := tc.then
			marker := sleepMarker()
			script := acptest.Script{Prompts: []acptest.Turn{
				{Match: "start", Steps: []acptest.Step{shell(orphanScript(marker, then)), onTerminal("terminal/output", "term-1")}},
				{Match: "end", Steps: tc.end},
			}}
			f := newTermFixture(t, script, Policy{Mode: ModeBuild}, r.opts(t))
			f.prompt(t, "start")
			daemon := fakebin.PidsFrom(t, filepath.Join(f.dir, "daemon"))[0]
			t.Cleanup(func() { syscall.Kill(daemon, syscall.SIGKILL) })
			f.prompt(t, "end")
			why := tc.end[0].Request.Method + " of a command that " + then
			waitAllGone(t, []int{daemon}, why)
			waitMarkedGone(t, marker, why)
			exit := f.rec.waitFor("exit event", func(ev Event) bool { return ev.Kind == KindTerminal && ev.Terminal.Exit != nil })
			if exit.Terminal.Uncontained != "" {
				t.Errorf("%s: exit event says uncontained: %q", then, exit.Terminal.Uncontained)
			}
		}
	})
}

// TestTerminalExitSaysUncontained: when the runner's process says its
// command's processes cannot all be accounted for, the terminal's exit
// event says why.
func TestTerminalExitSaysUncontained(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		shell("exit 0"), onTerminal("terminal/wait_for_exit", "term-1"),
	}}}}
	f := newTermFixture(t, script, Policy{Mode: ModeBuild}, &terminal.Options{Runner: uncontainedRunner{}})
	f.prompt(t, "go")
	exit := f.rec.waitFor("exit event", func(ev Event) bool { return ev.Kind == KindTerminal && ev.Terminal.Exit != nil })
	if exit.Terminal.Uncontained != "no subreaper here" {
		t.Errorf("exit event's Uncontained = %q, want the runner's reason", exit.Terminal.Uncontained)
	}
}

// uncontainedRunner runs commands locally, saying they are uncontained.
type uncontainedRunner struct{ terminal.Local }

func (r uncontainedRunner) Start(ctx context.Context, cmd terminal.Command) (terminal.Process, error) {
	p, err := r.Local.Start(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return uncontainedProcess{p}, nil
}

type uncontainedProcess struct{ terminal.Process }

func (uncontainedProcess) Uncontained() string { return "no subreaper here" }
