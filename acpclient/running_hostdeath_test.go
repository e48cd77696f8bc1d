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

// helperRunningHost is the value of helperHostEnv that makes the test
// binary a host of a command started with Start.
const helperRunningHost = "running"

// runHelperRunningHost starts a command with a child in its group, prints
// "command PID child PID sentinel PID" and waits to be killed.
func runHelperRunningHost() {
	c, err := Command("/bin/sh", "-c", `sleep 300 & echo $!; exec sleep 301`).Start(context.Background())
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	child, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("command", c.Pid(), "child", strings.TrimSpace(child), "sentinel", c.guard.pid())
	time.Sleep(time.Hour)
}

// TestHostDeathEndsRunningCommands: a host killed with SIGKILL leaves no
// command it started with Start behind, nor the command's child, nor the
// sentinel.
func TestHostDeathEndsRunningCommands(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks the process table through /proc")
	}
	host := exec.Command(os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), helperHostEnv+"="+helperRunningHost)
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
	var command, child, guard int
	n, _ := fmt.Sscanf(line, "command %d child %d sentinel %d", &command, &child, &guard)
	if err != nil || n != 3 || command <= 0 || child <= 0 || guard <= 0 {
		t.Fatalf("helper host said %q, %v", line, err)
	}
	procs := map[string]int{"command": command, "command's child": child, "sentinel": guard}
	for what, pid := range procs {
		t.Cleanup(func() { _ = killPid(pid) })
		if !alive(pid) {
			t.Fatalf("%s %d is not running while the host lives", what, pid)
		}
	}
	if err := host.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	host.Wait()
	for what, pid := range procs {
		waitGone(t, pid, what+" of a killed host")
	}
}
