package acpclient

import (
	"bufio"
	"context"
	"fmt"
	"os"
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
	checkHostDeath(t, helperRunningHost, "command")
}
