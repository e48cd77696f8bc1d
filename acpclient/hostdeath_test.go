package acpclient

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// helperHostEnv switches the test binary into a host process for
// TestHostDeathKillsTheAgent.
const helperHostEnv = "ACPCLIENT_TEST_HELPER_HOST"

// runHelperHost starts an agent that ignores both stdin EOF and SIGTERM,
// prints its pid and waits to be killed. It starts the agent from a
// goroutine whose thread then ends, as a thread-locked goroutine of an app
// might, so the test also covers the thread the agent was forked from.
func runHelperHost() {
	started := make(chan int)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine (unless it is the main one)
		rwc, err := Command("/bin/sh", "-c", `trap "" TERM; exec sleep 300`).Connect(context.Background())
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		started <- rwc.(*Process).Pid()
	}()
	fmt.Println("agent", <-started)
	time.Sleep(time.Hour)
}

// TestHostDeathKillsTheAgent: a host process killed with SIGKILL, which
// runs no cleanup of its own, leaves no agent behind.
func TestHostDeathKillsTheAgent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a parent-death signal exists only on Linux")
	}
	host := exec.Command(os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), helperHostEnv+"=1")
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
	pidText, ok := strings.CutPrefix(strings.TrimSpace(line), "agent ")
	pid, _ := strconv.Atoi(pidText)
	if err != nil || !ok || pid <= 0 {
		t.Fatalf("helper host said %q, %v", line, err)
	}
	t.Cleanup(func() { _ = killPid(pid) })
	if !alive(pid) {
		t.Fatalf("agent %d is not running while its host lives", pid)
	}
	if err := host.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	host.Wait()
	waitGone(t, pid, "agent of a killed host")
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
