//go:build unix

package acpclient

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// sentinelShell runs the sentinel. A fixed path, not a PATH lookup: the
// agent's PATH is the agent's business.
const sentinelShell = "/bin/sh"

// sentinelScript waits for its stdin to end, which happens only when this
// process is gone (it alone holds the write end), then kills its own process
// group: the agent's, which it joined. It ignores what a terminal, a
// hang-up, our own SIGTERM step or an agent signalling its group (a reload,
// a timer) would send, so in practice only SIGKILL ends it early, and a
// SIGKILL to the group ends the group anyway. Plain POSIX sh.
const sentinelScript = `trap '' HUP INT QUIT PIPE ALRM TERM USR1 USR2 TSTP TTIN TTOU; read -r line; kill -s KILL 0`

// sentinel is a small process that ends the agent's process group when this
// process dies without stopping it (SIGKILL, a crash), on every Unix.
//
// It joins the agent's group rather than one of its own. A group id is a pid
// number, and POSIX forbids reusing a pid number while a group of that id
// has a member, so a sentinel inside the group pins the id: "kill my own
// group" can never reach an unrelated group that got the number later, which
// "kill group N" from outside could once the agent and its children were
// gone (on Linux the agent dies by its parent-death signal at the same
// moment). The group is not the terminal's foreground group, so a Ctrl-C
// aimed at the host does not reach it either.
type sentinel struct {
	cmd   *exec.Cmd
	guard *os.File      // write end of its stdin; closing it fires the sentinel
	done  chan struct{} // closed once it has been reaped
}

// startSentinel starts a sentinel run by shell in process group pgid.
// Without the shell it returns an error and the agent runs unguarded.
func startSentinel(shell string, pgid int) (*sentinel, error) {
	r, w, err := os.Pipe() // close-on-exec: no other child keeps w after its exec
	if err != nil {
		return nil, fmt.Errorf("acpclient: sentinel pipe: %w", err)
	}
	cmd := exec.Command(shell, "-c", sentinelScript)
	// No parent-death signal: it must outlive this process to act. The root
	// directory, so that it keeps no directory of the agent's busy.
	cmd.Stdin, cmd.Dir, cmd.Env = r, "/", []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("acpclient: starting the sentinel of process group %d: %w", pgid, err)
	}
	s := &sentinel{cmd: cmd, guard: w, done: make(chan struct{})}
	go s.wait()
	return s, nil
}

// wait reaps the sentinel, whenever it dies. One that dies early (someone
// killed it) only takes its protection with it; the agent is not affected.
// The write end is closed only now: closed earlier, it would fire the
// sentinel.
func (s *sentinel) wait() {
	_ = s.cmd.Wait()
	s.guard.Close()
	close(s.done)
}

// stop kills the sentinel and returns once it has been reaped. It is never
// stopped by closing its stdin, which would make it kill the group.
func (s *sentinel) stop() {
	if s == nil {
		return
	}
	_ = s.cmd.Process.Kill() // after the reap, a no-op: os.Process knows it is done
	<-s.done
}

// pid is the sentinel's process id (for tests).
func (s *sentinel) pid() int { return s.cmd.Process.Pid }
