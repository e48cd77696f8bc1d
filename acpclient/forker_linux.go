//go:build linux

package acpclient

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// startProcess starts cmd with a parent-death signal (SIGKILL unless cmd
// sets another: a reaper's is SIGTERM, its cue to end its tree), from the
// forker's thread, and returns the function to call once the process has
// been reaped.
//
// SIGKILL, not SIGTERM: the signal matters only when this process is gone,
// and then nobody is left to escalate; an agent that ignores SIGTERM (the
// case this guards against) would survive it. A well-behaved agent loses
// nothing it would have had: its stdin reaches EOF at the same moment.
func startProcess(cmd *exec.Cmd) (reaped func(), err error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if cmd.SysProcAttr.Pdeathsig == 0 {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	return processForker.start(cmd)
}

// forker starts agent processes from one OS thread that lives as long as any
// child it started.
//
// The kernel sends the parent-death signal when the thread that forked the
// child exits, not when the process does. Go runs a goroutine on whatever
// thread is free and ends a thread when a goroutine locked to it returns, so
// forking from the goroutine that called Connect could kill the agent at a
// random later moment. The forker's goroutine locks its thread and never
// unlocks it; no other goroutine runs there, so the thread ends only with
// the process, or when the forker itself retires.
//
// It is one per process because what it stands for is one per process: a
// thread of this process that parents our children. It holds no
// configuration and nothing a caller can observe; it starts on first use and
// retires (its thread ends with it) once the last child it started has been
// reaped, so an idle program, or a test checking for leaked goroutines, sees
// nothing of it.
type forker struct {
	mu   sync.Mutex
	live int              // children started and not yet reaped
	reqs chan forkRequest // nil while no forker goroutine runs
}

type forkRequest struct {
	cmd  *exec.Cmd
	done chan error
}

var processForker forker

func (f *forker) start(cmd *exec.Cmd) (func(), error) {
	f.mu.Lock()
	if f.reqs == nil {
		f.reqs = make(chan forkRequest)
		go forkLoop(f.reqs)
	}
	reqs := f.reqs
	f.live++ // keeps reqs open until this child is reaped
	f.mu.Unlock()

	done := make(chan error, 1)
	reqs <- forkRequest{cmd: cmd, done: done}
	if err := <-done; err != nil {
		f.release()
		return nil, err
	}
	return sync.OnceFunc(f.release), nil
}

// release forgets one child; the last one retires the forker.
func (f *forker) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.live--
	if f.live == 0 {
		close(f.reqs)
		f.reqs = nil
	}
}

// forkLoop runs on its own locked thread until reqs is closed. It returns
// still locked, so the runtime ends the thread: no child of it is alive then.
func forkLoop(reqs <-chan forkRequest) {
	runtime.LockOSThread()
	for r := range reqs {
		r.done <- r.cmd.Start()
	}
}
