//go:build linux

package reaper

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
)

// The helper imports the standard library alone. A package's init runs
// after those of every package it imports, so with golang.org/x/sys/unix
// (for prctl and dup2) some 40 more packages of the program were
// initialized before this one could start the command; now it runs right
// after os.
func init() {
	if os.Getenv(Env) != Value || len(os.Args) < 2 || os.Args[0] != Arg0 {
		return
	}
	// syscall.Exit, not os.Exit: in a build with the race detector, os.Exit
	// first sleeps a second (GORACE atexit_sleep_ms), which would delay the
	// end of every command, and so every stop, by as much. The helper has
	// nothing to flush.
	syscall.Exit(run(os.Args[1:]))
}

// run is the helper: it runs argv and ends its whole tree (see the package
// doc). Its exit code is 0 once it has reported a status, else 125.
func run(argv []string) int {
	os.Unsetenv(Env) // the command's environment is the app's choice, without it
	syscall.CloseOnExec(StatusFD)
	report := os.NewFile(StatusFD, "status")
	say := func(format string, a ...any) { fmt.Fprintf(report, format+"\n", a...) }

	// Caught, not ignored: an ignored signal would stay ignored in the
	// command, a caught one is reset by its exec.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	if err := becomeSubreaper(); err != nil {
		say("uncontained this kernel has no child subreapers (%v)", err)
	}
	// The command's parent-death signal is sent when the thread that forked
	// it exits: this one, locked until the helper exits.
	runtime.LockOSThread()
	cmd, err := os.StartProcess(argv[0], argv, &os.ProcAttr{
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		errno := syscall.Errno(0)
		errors.As(err, &errno)
		say("error %d %v", uintptr(errno), err)
		return 125
	}
	// The helper keeps no copy of the command's stdin, output or terminal:
	// their ends are the command's (and its tree's) alone.
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		for fd := 0; fd <= 2; fd++ {
			_ = syscall.Dup3(int(null.Fd()), fd, 0)
		}
		null.Close()
	}
	say("pid %d", cmd.Pid)

	var reaped atomic.Bool
	go func() {
		for range sigs {
			// os.Process signals through a pidfd where the kernel has
			// them, so a reaped command's reused pid is never hit; without
			// one the flag narrows that to the instant after the reap.
			if !reaped.Load() {
				_ = cmd.Signal(syscall.SIGKILL)
			}
		}
	}()
	var status syscall.WaitStatus
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid == cmd.Pid {
			status = ws
			reaped.Store(true)
			break
		}
		// an orphan re-parented here has died: reaped, nothing more
	}
	endTree()
	say("status %d", uint32(status))
	return 0
}

// endTree kills every child of the helper and reaps it, until none is
// left. A killed process's children become the helper's, so each round
// reaches one level deeper; a process cannot escape the rounds, as every
// one that leaves the tree's parent links lands here. Only unreaped
// children are signalled, so no pid can have been reused.
func endTree() {
	self := os.Getpid()
	for {
		for _, pid := range children(self) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.ECHILD) {
			return
		}
		for { // reap what else is already dead before listing again
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}

// children lists the helper's children: from /proc/self/task/*/children
// where the kernel has it (CONFIG_PROC_CHILDREN), else by scanning /proc for
// processes whose parent is self.
func children(self int) []int {
	tasks, err := os.ReadDir("/proc/self/task")
	if err == nil {
		var pids []int
		ok := true
		for _, task := range tasks {
			b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/children")
			if err != nil {
				ok = false
				break
			}
			for _, f := range bytes.Fields(b) {
				if pid, err := strconv.Atoi(string(f)); err == nil {
					pids = append(pids, pid)
				}
			}
		}
		if ok {
			return pids
		}
	}
	return scanChildren(self)
}

// scanChildren reads the parent of every process in /proc.
func scanChildren(self int) []int {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer dir.Close()
	names, _ := dir.Readdirnames(-1)
	var pids []int
	buf := make([]byte, 512)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid, buf); ok && ppid == self {
			pids = append(pids, pid)
		}
	}
	return pids
}

// parentOf reads field 4 of /proc/PID/stat, counted from the last ')' since
// the command name may hold spaces and parentheses.
func parentOf(pid int, buf []byte) (int, bool) {
	fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, false
	}
	n, err := syscall.Read(fd, buf)
	syscall.Close(fd)
	if err != nil || n <= 0 {
		return 0, false
	}
	line := buf[:n]
	i := bytes.LastIndexByte(line, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(line[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	return ppid, err == nil
}

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of linux/prctl.h.
const prSetChildSubreaper = 36

// becomeSubreaper makes this process a child subreaper (prctl(2)).
func becomeSubreaper() error {
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0, 0, 0, 0); errno != 0 {
		return errno
	}
	return nil
}
