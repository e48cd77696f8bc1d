package acpclient

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/waitfor"
)

// detachedChild is shell text that starts a grandchild in a session of its
// own (out of the agent's process group) holding the agent's stdout and
// stderr, and waits until it has written its pid to pidFile.
func detachedChild(pidFile string) string {
	return `setsid sh -c 'echo $$ > ` + pidFile + `; exec sleep 300' & while [ ! -s ` + pidFile + ` ]; do sleep 0.01; done`
}

// TestAgentExitEndsAStreamHeldByADetachedGrandchild: the agent exits while a
// grandchild that called setsid holds its stdout. The connection ends soon
// after (not at the watchdog), with the exit status and stderr tail, and
// after Close the grandchild is gone too.
func TestAgentExitEndsAStreamHeldByADetachedGrandchild(t *testing.T) {
	dir := t.TempDir()
	gpidFile, goFile := filepath.Join(dir, "grandchild.pid"), filepath.Join(dir, "go")
	tr := &CommandTransport{Path: "/bin/sh", Args: []string{"-c", detachedChild(gpidFile) +
		`; while [ ! -e ` + goFile + ` ]; do sleep 0.01; done; echo "dying words" >&2; exit 3`},
		DescendantScan: 10 * time.Millisecond, noReaper: true}
	c, err := Connect(context.Background(), tr, newRecorder(), &ConnOptions{ExitWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gpid := waitPid(t, gpidFile)
	t.Cleanup(func() { _ = killPid(gpid) })
	// Let the agent exit only once the sampler has seen the grandchild.
	tree := c.rwc.(*process).stop.tree
	for deadline := time.Now().Add(5 * time.Second); !slices.Contains(tree.recorded(), gpid); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d never recorded (recorded %v)", gpid, tree.recorded())
		}
	}
	os.WriteFile(goFile, nil, 0o644)
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not end after the agent exited (its grandchild holds stdout)")
	}
	var exit *ExitError
	if !errors.As(c.Err(), &exit) || !strings.Contains(exit.Error(), "exit status 3") || !strings.Contains(exit.Stderr, "dying words") {
		t.Errorf("Err = %v, want an ExitError with the status and stderr tail", c.Err())
	}
	c.Close()
	waitGone(t, gpid, "grandchild that left the process group")
}

// TestCloseEndsDescendantsThatLeftTheGroup: Close finds a grandchild that
// called setsid while the agent is alive (no periodic sampling here: the
// tree is recorded when the stop begins) and ends it with the agent.
func TestCloseEndsDescendantsThatLeftTheGroup(t *testing.T) {
	dir := t.TempDir()
	gpidFile := filepath.Join(dir, "grandchild.pid")
	tr := &CommandTransport{Path: "/bin/sh", Args: []string{"-c", `trap "" TERM; ` + detachedChild(gpidFile) + `; while :; do sleep 0.02; done`},
		StopTimeout: 20 * time.Millisecond, KillTimeout: 20 * time.Millisecond, DescendantScan: -1, noReaper: true}
	rwc, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := rwc.(*process)
	gpid := waitPid(t, gpidFile)
	t.Cleanup(func() { _ = killPid(gpid) })
	p.Close()
	if alive(p.Pid()) {
		t.Errorf("agent %d survived Close", p.Pid())
	}
	waitGone(t, gpid, "grandchild that left the process group")
}

// TestDetachedWriterCannotHoldTheStreamOpen: a detached grandchild that
// writes without end does not keep the stream open past the exit drain, and
// what the agent wrote before exiting is read.
func TestDetachedWriterCannotHoldTheStreamOpen(t *testing.T) {
	gpidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	tr := &CommandTransport{Path: "/bin/sh", Args: []string{"-c", `echo last words; setsid sh -c 'echo $$ > ` + gpidFile +
		`; exec yes' & while [ ! -s ` + gpidFile + ` ]; do sleep 0.01; done; exit 0`},
		ExitDrain: 50 * time.Millisecond, noReaper: true}
	rwc, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := rwc.(*process)
	defer p.Close()
	t.Cleanup(func() { _ = killPid(waitPid(t, gpidFile)) })
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(p)
		done <- b
	}()
	select {
	case b := <-done:
		if !strings.HasPrefix(string(b), "last words\n") {
			t.Errorf("read %.40q…, want the agent's last words first", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a detached writer kept the stream open")
	}
}

// TestBufferedOutputSurvivesTheExitDrain: output the agent wrote before
// exiting is read even by a reader that comes back after the drain.
func TestBufferedOutputSurvivesTheExitDrain(t *testing.T) {
	dir := t.TempDir()
	gpidFile := filepath.Join(dir, "grandchild.pid")
	tr := &CommandTransport{Path: "/bin/sh", Args: []string{"-c", detachedChild(gpidFile) + `; echo line one; echo line two`},
		ExitDrain: time.Millisecond, noReaper: true}
	rwc, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := rwc.(*process)
	defer p.Close()
	t.Cleanup(func() { _ = killPid(waitPid(t, gpidFile)) })
	waitfor.Closed(t, p.Exited(), "the process to exit")
	time.Sleep(20 * time.Millisecond) // past the drain, as a slow reader would be
	b, err := io.ReadAll(p)
	if string(b) != "line one\nline two\n" || err != nil {
		t.Fatalf("read %q, %v", b, err)
	}
}

// TestSignalChecksTheStartTime: a recorded pid is signalled only while it
// still names the process recorded, not one that reused the pid.
func TestSignalChecksTheStartTime(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	e, ok := readProcStat(cmd.Process.Pid, make([]byte, 512))
	if !ok {
		t.Fatal("cannot read the stat of a live child")
	}
	signalProcess(procEntry{pid: e.pid, start: e.start + 1}, syscall.SIGKILL)
	signalProcess(e, syscall.SIGTERM)
	// Had the SIGKILL gone out, it would be what ended the process.
	if err := cmd.Wait(); err == nil || err.Error() != "signal: terminated" {
		t.Fatalf("wait: %v, want only the SIGTERM sent to the right start time", err)
	}
}

func TestParseProcStat(t *testing.T) {
	fields := make([]string, 52)
	for i := range fields {
		fields[i] = "0"
	}
	fields[3], fields[21] = "41", "987654"
	line := "42 (a) (b c)) " + strings.Join(fields[2:], " ")
	e, ok := parseProcStat(42, []byte(line))
	if !ok || e.ppid != 41 || e.start != 987654 {
		t.Fatalf("parsed %+v, %v from %q", e, ok, line)
	}
	if _, ok := parseProcStat(1, []byte("1 (x) S 0")); ok {
		t.Fatal("a truncated line parsed")
	}
}

// TestParseProcStatMatchesFields: on every process of this machine the
// allocation-free parse gives what splitting the line into fields gives, and
// it allocates nothing.
func TestParseProcStatMatchesFields(t *testing.T) {
	names, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip(err)
	}
	checked := 0
	for _, de := range names {
		pid, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		line, err := os.ReadFile("/proc/" + de.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		fields := strings.Fields(string(line[bytes.LastIndexByte(line, ')')+1:]))
		ppid, _ := strconv.Atoi(fields[1])
		start, _ := strconv.ParseUint(fields[19], 10, 64)
		e, ok := parseProcStat(pid, line)
		if !ok || e != (procEntry{pid: pid, ppid: ppid, start: start}) {
			t.Fatalf("parsed %+v, %v from %q; want ppid %d start %d", e, ok, line, ppid, start)
		}
		if allocs := testing.AllocsPerRun(10, func() { parseProcStat(pid, line) }); allocs != 0 {
			t.Fatalf("parseProcStat allocates %.0f times", allocs)
		}
		checked++
	}
	if checked == 0 {
		t.Skip("no process readable in /proc")
	}
	for _, bad := range []string{"1 (x) S", "1 (x) S x 0", "1 (x) S 4" + strings.Repeat(" 0", 16) + " 9z"} {
		if e, ok := parseProcStat(1, []byte(bad)); ok {
			t.Errorf("parsed %+v from %q", e, bad)
		}
	}
}

// TestRecordFollowsTheTree: record finds descendants at every depth in one
// call, however the scan orders them, drops a recorded pid whose start time
// changed (reused) without adopting its children, and adopts nothing of a
// root that is not the one recorded.
func TestRecordFollowsTheTree(t *testing.T) {
	root := procEntry{pid: 10, ppid: 1, start: 100}
	d := &descendants{root: root, seen: map[int]uint64{20: 200}}
	d.record(indexProcs([]procEntry{
		{pid: 13, ppid: 12, start: 5}, {pid: 12, ppid: 11, start: 5}, {pid: 11, ppid: 10, start: 5},
		root, {pid: 20, ppid: 1, start: 201}, {pid: 21, ppid: 20, start: 5}, {pid: 30, ppid: 1, start: 5},
	}))
	if want := map[int]uint64{11: 5, 12: 5, 13: 5}; !maps.Equal(d.seen, want) {
		t.Fatalf("recorded %v, want %v", d.seen, want)
	}
	d = &descendants{root: root, seen: map[int]uint64{}}
	d.record(indexProcs([]procEntry{{pid: 10, ppid: 1, start: 101}, {pid: 11, ppid: 10, start: 5}}))
	if len(d.seen) != 0 {
		t.Fatalf("recorded %v under a reused root pid", d.seen)
	}
}

// BenchmarkScanProcs measures one scan of /proc, the cost of a descendant
// sample; procs/op is how many processes this machine had.
func BenchmarkScanProcs(b *testing.B) {
	n := 0
	for b.Loop() {
		n = len(scanProcs())
	}
	b.ReportMetric(float64(n), "procs")
}

// TestLeftoverIsBounded: after the exit drain no more than maxLeftover bytes
// are read, however full the pipe is kept.
func TestLeftoverIsBounded(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	if _, err := w.Write(make([]byte, 32<<10)); err != nil {
		t.Fatal(err)
	}
	p := &process{stdout: r, maxLeftover: 1000}
	p.stopping.Store(true) // no shutdown: there is no process
	r.SetReadDeadline(time.Unix(1, 0))
	b, err := io.ReadAll(p)
	if len(b) != 1000 || err != nil {
		t.Fatalf("read %d bytes after the drain, %v; want 1000", len(b), err)
	}
}

// TestStartKillEndsDescendantsThatLeftTheGroup: a terminal command's
// grandchild that called setsid is recorded when Kill begins (no periodic
// sampling here) and ended with the command; Read still ends.
func TestStartKillEndsDescendantsThatLeftTheGroup(t *testing.T) {
	gpidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	tr := &CommandTransport{Path: "/bin/sh", Args: []string{"-c", detachedChild(gpidFile) + `; echo started; exec sleep 301`},
		DescendantScan: -1}
	c, err := tr.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gpid := waitPid(t, gpidFile)
	t.Cleanup(func() { _ = killPid(gpid) })
	// Kill only once the command has printed, so the output is known.
	first := make([]byte, len("started\n"))
	if _, err := io.ReadFull(c, first); err != nil || string(first) != "started\n" {
		t.Fatalf("first output %q, %v; want %q", first, err, "started\n")
	}
	c.Kill()
	if st := waitStatus(t, c); st.Signal == nil || *st.Signal != "SIGKILL" {
		t.Errorf("status %+v, want SIGKILL", st)
	}
	waitGone(t, gpid, "grandchild of a terminal command that left its process group")
	if out, _ := readAllErr(t, c); len(out) != 0 {
		t.Errorf("output after %q: %q, want nothing", first, out)
	}
}
