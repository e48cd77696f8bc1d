package acpclient

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// helperHostEnv switches the test binary into a host process for
// TestHostDeathKillsTheAgent.
const helperHostEnv = "ACPCLIENT_TEST_HELPER_HOST"

// helperAgentScript is the agent of the helper host: it ignores SIGTERM and
// stdin EOF, starts a child in its process group that ignores them too (a
// background job's stdin is /dev/null), prints the child's pid and becomes
// a long sleep.
const helperAgentScript = `trap "" TERM; sleep 300 & echo $!; exec sleep 301`

// runHelperHost starts script as an agent (without its reaper if told) and prints the pids of the agent,
// of the child whose pid is the first line of its stdout and of what guards
// them (its reaper, or without one its sentinel), then waits to be killed.
// It starts the agent from a goroutine whose thread then ends, as a
// thread-locked goroutine of an app might, so the test also covers the
// thread the agent was forked from.
func runHelperHost(script string, noReaper bool) {
	started := make(chan *process)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine (unless it is the main one)
		tr := Command("/bin/sh", "-c", script)
		tr.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + os.TempDir()}
		tr.noReaper = noReaper
		rwc, err := tr.Connect(context.Background())
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		started <- rwc.(*process)
	}()
	p := <-started
	child, err := bufio.NewReader(p).ReadString('\n')
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	guard := p.stop.cmd.Process.Pid // the reaper
	if p.stop.link == nil {
		guard = p.stop.guard.pid()
	}
	fmt.Println("agent", p.Pid(), "child", strings.TrimSpace(child), "sentinel", guard)
	time.Sleep(time.Hour)
}

// TestHostDeathKillsTheAgent: a host process killed with SIGKILL, which
// runs no cleanup of its own, leaves no agent behind, nor anything the agent
// started in its process group (a child that ignores SIGTERM and stdin), nor
// what ended them (its reaper).
func TestHostDeathKillsTheAgent(t *testing.T) {
	checkHostDeath(t, "1", "agent")
}

// agentDaemonScript is an agent that starts a daemon which leaves its
// process group and session and is orphaned at once (orphanDaemon prints
// its pid on the agent's stdout), then waits for its stdin to end.
const agentDaemonScript = orphanDaemon + `; read line; exit 0`

// helperAgentDaemonHost is the value of helperHostEnv that makes the test
// binary a host of agentDaemonScript.
const helperAgentDaemonHost = "agentdaemon"

// helperSentinelHost is the value of helperHostEnv that makes the test
// binary a host of helperAgentScript run without its reaper.
const helperSentinelHost = "sentinel"

// TestHostDeathKillsTheAgentWithoutReaper: so does the sentinel, where the
// agent runs without its reaper.
func TestHostDeathKillsTheAgentWithoutReaper(t *testing.T) {
	checkHostDeath(t, helperSentinelHost, "agent")
}

// checkHostDeath runs the test binary as a helper host (helperHostEnv=mode)
// that prints "WHAT PID child PID sentinel PID" once they run, SIGKILLs it,
// and checks that all three leave the process table.
func checkHostDeath(t *testing.T, mode, what string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("checks the process table through /proc")
	}
	host := exec.Command(os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), helperHostEnv+"="+mode)
	host.Stderr = os.Stderr
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Process.Kill(); host.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	var main, child, guard int
	n, _ := fmt.Sscanf(line, what+" %d child %d sentinel %d", &main, &child, &guard)
	if err != nil || n != 3 || main <= 0 || child <= 0 || guard <= 0 {
		t.Fatalf("helper host said %q, %v", line, err)
	}
	procs := map[string]int{what: main, what + "'s child": child, "sentinel": guard}
	for name, pid := range procs {
		t.Cleanup(func() { _ = killPid(pid) })
		if !alive(pid) {
			t.Fatalf("%s %d is not running while the host lives", name, pid)
		}
	}
	if err := host.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	host.Wait()
	for name, pid := range procs {
		waitGone(t, pid, name+" of a killed host")
	}
}

// waitGone waits, bounded, until pid has left the process table (a zombie
// counts as gone).
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); alive(pid); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) is still running", what, pid)
		}
	}
}
