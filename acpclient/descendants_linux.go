//go:build linux

package acpclient

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// procEntry is one process as /proc shows it. Start is field 22 of
// /proc/PID/stat, the start time in clock ticks since boot: a pid and its
// start time name one process, even after the pid is reused.
type procEntry struct {
	pid, ppid int
	start     uint64
}

// descendants records the processes an agent started, by sampling /proc
// while the agent lives, so that those which left its process group (setsid,
// a daemon) can still be ended when it stops. Once the agent has exited its
// orphans are re-parented and the parent links that lead to them are gone;
// only what was recorded before can be found.
type descendants struct {
	root procEntry
	mu   sync.Mutex
	seen map[int]uint64 // pid → start time
	// Sampling runs on a timer, not on a goroutine of its own that would
	// wait between samples for the agent's whole life.
	interval time.Duration
	exited   <-chan struct{}
	timer    *time.Timer // nil when not sampling
	ended    bool
}

// newDescendants starts recording the descendants of pid every interval
// (none when interval is negative) until the process has exited or end is
// called.
func newDescendants(pid int, interval time.Duration, exited <-chan struct{}) *descendants {
	d := &descendants{seen: map[int]uint64{}, interval: interval, exited: exited}
	d.root = procEntry{pid: pid}
	if e, ok := readProcStat(pid, make([]byte, 512)); ok {
		d.root = e
	}
	if interval >= 0 {
		d.mu.Lock()
		d.timer = time.AfterFunc(interval, d.tick)
		d.mu.Unlock()
	}
	return d
}

// tick takes one sample and arms the next, until the process has exited
// or end was called.
func (d *descendants) tick() {
	select {
	case <-d.exited:
		return
	default:
	}
	procs := scanProcs()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ended {
		return
	}
	d.record(procs)
	d.timer.Reset(d.interval)
}

// sample adds every live descendant of the agent, or of a process recorded
// before, and forgets recorded processes that are gone.
func (d *descendants) sample() {
	procs := scanProcs()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.record(procs)
}

// record works on the scan as it is, without an index of it: with many
// agents on one host every agent scans every process each second, and maps
// built per scan were most of the host's garbage. Descendants are found in
// passes over the scan, as many as the tree has new levels (usually one).
func (d *descendants) record(procs []procEntry) {
	live := make(map[int]bool, len(d.seen))
	rootAlive := false
	for _, e := range procs {
		if start, ok := d.seen[e.pid]; ok && start == e.start {
			live[e.pid] = true
		}
		if e.pid == d.root.pid && e.start == d.root.start {
			rootAlive = true
		}
	}
	for pid := range d.seen {
		if !live[pid] {
			delete(d.seen, pid)
		}
	}
	for added := true; added; {
		added = false
		for _, e := range procs {
			if _, known := d.seen[e.pid]; known || e.pid == d.root.pid {
				continue
			}
			if _, parent := d.seen[e.ppid]; parent || (rootAlive && e.ppid == d.root.pid) {
				d.seen[e.pid] = e.start
				added = true
			}
		}
	}
}

// end stops the sampling and ends every recorded descendant still alive.
// Each is stopped first (a stopped process cannot fork), and the tree is
// sampled again until no new member turns up, so children born meanwhile
// are caught; then all are killed. The agent itself is the caller's to end.
func (d *descendants) end() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ended = true // a tick under way records nothing more
	if d.timer != nil {
		d.timer.Stop()
	}
	stopped := map[int]uint64{}
	for round := 0; round < 32; round++ {
		d.record(scanProcs())
		fresh := 0
		for pid, start := range d.seen {
			if _, done := stopped[pid]; !done {
				signalProcess(procEntry{pid: pid, start: start}, syscall.SIGSTOP)
				stopped[pid] = start
				fresh++
			}
		}
		if fresh == 0 {
			break
		}
	}
	for pid, start := range stopped {
		signalProcess(procEntry{pid: pid, start: start}, syscall.SIGKILL)
	}
}

// recorded returns the pids recorded so far (for tests).
func (d *descendants) recorded() []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	var pids []int
	for pid := range d.seen {
		pids = append(pids, pid)
	}
	return pids
}

// signalProcess signals e only if its pid still names the process that was
// recorded. With a pidfd the check and the signal are about the same process
// even if the pid is reused in between; without one (Linux before 5.3) a
// reuse in the instant between them is the remaining hazard.
func signalProcess(e procEntry, sig syscall.Signal) {
	buf := make([]byte, 512)
	fd, err := unix.PidfdOpen(e.pid, 0)
	if err == nil {
		defer unix.Close(fd)
		if now, ok := readProcStat(e.pid, buf); ok && now.start == e.start {
			_ = unix.PidfdSendSignal(fd, sig, nil, 0)
		}
		return
	}
	if errors.Is(err, unix.ESRCH) {
		return
	}
	if now, ok := readProcStat(e.pid, buf); ok && now.start == e.start {
		_ = syscall.Kill(e.pid, sig)
	}
}

// scanProcs lists every process in /proc with its parent and start time.
func scanProcs() []procEntry {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer dir.Close()
	names, _ := dir.Readdirnames(-1)
	procs := make([]procEntry, 0, len(names))
	buf := make([]byte, 512)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if e, ok := readProcStat(pid, buf); ok {
			procs = append(procs, e)
		}
	}
	return procs
}

// readProcStat reads /proc/PID/stat into buf (reused across calls to keep a
// scan cheap) and parses the pid, parent and start time.
func readProcStat(pid int, buf []byte) (procEntry, bool) {
	fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return procEntry{}, false
	}
	n, err := syscall.Read(fd, buf)
	syscall.Close(fd)
	if err != nil || n <= 0 {
		return procEntry{}, false
	}
	return parseProcStat(pid, buf[:n])
}

// parseProcStat parses a stat line: "pid (comm) state ppid … starttime …".
// The command name may hold spaces and parentheses, so fields are counted
// from the last ')'. It allocates nothing: every agent parses every process
// of the host each second.
func parseProcStat(pid int, line []byte) (procEntry, bool) {
	i := bytes.LastIndexByte(line, ')')
	if i < 0 {
		return procEntry{}, false
	}
	// After ')' field 3 (state) comes first; ppid is field 4, starttime 22.
	rest := line[i+1:]
	ppid, rest, ok1 := statField(rest, 1)
	start, _, ok2 := statField(rest, 17)
	if !ok1 || !ok2 || ppid > math.MaxInt {
		return procEntry{}, false
	}
	return procEntry{pid: pid, ppid: int(ppid), start: start}, true
}

// statField skips skip space-separated fields of b, then parses the next as
// a decimal number; it returns the rest of b after that number.
func statField(b []byte, skip int) (uint64, []byte, bool) {
	for ; skip > 0; skip-- {
		b = bytes.TrimLeft(b, " ")
		j := bytes.IndexByte(b, ' ')
		if j < 0 {
			return 0, nil, false
		}
		b = b[j:]
	}
	b = bytes.TrimLeft(b, " ")
	var n uint64
	digits := 0
	for ; digits < len(b) && b[digits] >= '0' && b[digits] <= '9'; digits++ {
		if n > (math.MaxUint64-9)/10 {
			return 0, nil, false
		}
		n = n*10 + uint64(b[digits]-'0')
	}
	if digits == 0 || (digits < len(b) && b[digits] != ' ' && b[digits] != '\n') {
		return 0, nil, false
	}
	return n, b[digits:], true
}
