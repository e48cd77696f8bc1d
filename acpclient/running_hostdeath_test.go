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

// orphanDaemon starts a daemon that leaves the command's process group and
// session and is orphaned at once (the sh that started it exits), and
// prints its pid: what a command that "starts a server" does.
const orphanDaemon = `sh -c 'setsid sleep 1000 >/dev/null 2>&1 </dev/null & echo $!'`

// runHelperRunningHost starts a command with a daemon that left its group
// and session and was orphaned at once, prints "command PID child PID
// sentinel PID" (the child is the daemon, the sentinel the command's
// reaper) and waits to be killed.
func runHelperRunningHost() {
	c, err := Command("/bin/sh", "-c", orphanDaemon+"; exec sleep 301").Start(context.Background())
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	child, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	lc := c.(*localCommand)
	fmt.Println("command", lc.pid, "child", strings.TrimSpace(child), "sentinel", lc.stop.cmd.Process.Pid)
	time.Sleep(time.Hour)
}

// TestHostDeathEndsRunningCommands: a host killed with SIGKILL leaves no
// command it started with Start behind, nor the daemon the command
// started, nor the command's reaper.
func TestHostDeathEndsRunningCommands(t *testing.T) {
	checkHostDeath(t, helperRunningHost, "command")
}
