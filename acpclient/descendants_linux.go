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
	// Sampling is the process-wide treeSampler's: one scan of /proc per
	// interval serves every agent, rather than a scan each.
	interval time.Duration
	exited   <-chan struct{}
	trees    *treeSampler // its scans, periodic and fresh
	sampling bool         // a member of trees' groups
	ended    bool
}

// newDescendants starts recording the descendants of pid every interval
// (none when interval is negative) until the process has exited or end is
// called.
func newDescendants(pid int, interval time.Duration, exited <-chan struct{}) *descendants {
	return newDescendantsIn(&processTrees, pid, interval, exited)
}

// newDescendantsIn is newDescendants sampled by s.
func newDescendantsIn(s *treeSampler, pid int, interval time.Duration, exited <-chan struct{}) *descendants {
	d := &descendants{seen: map[int]uint64{}, interval: interval, exited: exited, trees: s}
	d.root = procEntry{pid: pid}
	if e, ok := readProcStat(pid, make([]byte, 512)); ok {
		d.root = e
	}
	if interval >= 0 {
		d.sampling = true
		s.join(d, interval)
	}
	return d
}

// take records from one periodic scan and reports whether d wants more:
// not once its process has exited or end was called.
func (d *descendants) take(scan *procScan) bool {
	select {
	case <-d.exited:
		return false
	default:
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ended {
		return false
	}
	d.record(scan)
	return true
}

// sample adds every live descendant of the agent, or of a process recorded
// before, and forgets recorded processes that are gone.
func (d *descendants) sample() {
	scan := d.trees.fresh()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.record(scan)
}

// record forgets recorded processes the scan no longer has (or has under a
// reused pid) and adds every descendant of the root, if it still lives, and
// of each process still recorded, at any depth.
func (d *descendants) record(scan *procScan) {
	var from []int
	for pid, start := range d.seen {
		if now, ok := scan.start[pid]; ok && now == start {
			from = append(from, pid)
		} else {
			delete(d.seen, pid)
		}
	}
	if now, ok := scan.start[d.root.pid]; ok && now == d.root.start {
		from = append(from, d.root.pid)
	}
	for len(from) > 0 {
		pid := from[len(from)-1]
		from = from[:len(from)-1]
		for _, c := range scan.children[pid] {
			if _, known := d.seen[c.pid]; known || c.pid == d.root.pid {
				continue
			}
			d.seen[c.pid] = c.start
			from = append(from, c.pid)
		}
	}
}

// procScan is one scan of /proc, indexed: the start time of each pid and
// the children of each parent. One scan serves every agent's record.
type procScan struct {
	start    map[int]uint64
	children map[int][]procEntry
}

// indexProcs indexes a scan.
func indexProcs(procs []procEntry) *procScan {
	s := &procScan{start: make(map[int]uint64, len(procs)), children: map[int][]procEntry{}}
	for _, e := range procs {
		s.start[e.pid] = e.start
		s.children[e.ppid] = append(s.children[e.ppid], e)
	}
	return s
}

// end stops the sampling and ends every recorded descendant still alive.
// Each is stopped first (a stopped process cannot fork), and the tree is
// sampled again until no new member turns up, so children born meanwhile
// are caught; then all are killed. The agent itself is the caller's to end.
func (d *descendants) end() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ended = true // a tick under way records nothing more
	if d.sampling {
		d.trees.leave(d, d.interval)
		d.sampling = false
	}
	stopped := map[int]uint64{}
	for round := 0; round < 32; round++ {
		d.record(d.trees.fresh())
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
