//go:build unix

package journal

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acphost/acphost/bridge"
)

// crashDBEnv names the journal TestCrashChild floods; without it the test
// is skipped (it only runs as TestCrashSIGKILL's child process).
const crashDBEnv = "ACPHOST_JOURNAL_CRASH_DB"

// crashDelayEnv, when set, is the CommitDelay TestCrashChild opens the
// journal with; it then reports the last Pos of every crashFlushEvery
// batches once Flush committed them.
const crashDelayEnv = "ACPHOST_JOURNAL_CRASH_COMMIT_DELAY"

const crashFlushEvery = 5

const crashBatch = 50

var crashKeys = []string{"k1", "k2", "k3"}

// TestCrashChild appends batches to the journal in crashDBEnv, continuing
// its numbering, and prints the last Pos of every committed batch (with a
// commit delay, of every flushed one), until it is killed (or gives up
// after a while, should its parent be gone).
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashDBEnv)
	if path == "" {
		t.Skip("the child process of TestCrashSIGKILL")
	}
	ctx := context.Background()
	opts := &Options{}
	if v := os.Getenv(crashDelayEnv); v != "" {
		var err error
		if opts.CommitDelay, err = time.ParseDuration(v); err != nil {
			t.Fatal(err)
		}
	}
	db, err := Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pos, err := db.LastPos(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]uint64{}
	for _, key := range crashKeys {
		if last[key], err = db.LastSeq(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	filler := strings.Repeat("x", 400) // bigger rows: longer commits to land the kill in
	for deadline, n := time.Now().Add(20*time.Second), 1; time.Now().Before(deadline); n++ {
		batch := flood(crashBatch, &pos, crashKeys, last)
		for i := range batch {
			batch[i].Text += filler
		}
		if err := db.Append(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if opts.CommitDelay > 0 {
			if n%crashFlushEvery != 0 {
				continue
			}
			if err := db.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
		fmt.Println(pos)
	}
}

// TestCrashSIGKILL kills a process in the middle of a flood of appends,
// twice, and checks after each kill that the reopened journal is sound and
// holds every committed batch, whole, with no gap in Pos or Seq. The kill
// lands at a different point of the child's loop each time: right after a
// commit it reported, or a little later, inside a following transaction.
func TestCrashSIGKILL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	var reported uint64
	for round, delay := range []time.Duration{0, 200 * time.Microsecond, time.Millisecond, 3 * time.Millisecond, 7 * time.Millisecond} {
		got := floodAndKill(t, path, 2+3*round, delay, 0)
		if got < reported {
			t.Fatalf("the second child reported Pos %d, below the first's %d", got, reported)
		}
		reported = got
		checkAfterCrash(t, path, reported, crashBatch)
	}
}

// TestCrashSIGKILLWithCommitDelay is TestCrashSIGKILL for a journal whose
// batches wait for a delayed commit: a kill loses only what waited, so the
// journal still holds every flushed batch, ends on a whole batch, and has
// no gap.
func TestCrashSIGKILLWithCommitDelay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	var reported uint64
	for round, delay := range []time.Duration{0, time.Millisecond, 3 * time.Millisecond} {
		got := floodAndKill(t, path, 2+round, delay, 5*time.Millisecond)
		if got < reported {
			t.Fatalf("the second child reported Pos %d, below the first's %d", got, reported)
		}
		reported = got
		// What the child appended after its last Flush may be committed
		// too (the delay, the bounds), in whole batches.
		checkAfterCrash(t, path, reported, math.MaxUint64-reported)
	}
}

// floodAndKill runs TestCrashChild on path (with commitDelay, unless 0),
// SIGKILLs it delay after it has reported killAfter commits, and returns
// the last Pos it reported.
func floodAndKill(t *testing.T, path string, killAfter int, delay, commitDelay time.Duration) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDBEnv+"="+path)
	if commitDelay > 0 {
		cmd.Env = append(cmd.Env, crashDelayEnv+"="+commitDelay.String())
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var reported uint64
	commits := 0
	lines := bufio.NewScanner(stdout)
	for lines.Scan() { // until the killed child's end closes the pipe
		pos, err := strconv.ParseUint(lines.Text(), 10, 64)
		if err != nil {
			continue // the test framework's own lines
		}
		reported = pos
		if commits++; commits == killAfter {
			time.Sleep(delay)
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	assertZombie(t, cmd.Process.Pid)
	err = cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v after %d commits, not by SIGKILL; stderr:\n%s", err, commits, stderr.String())
	}
	if commits < killAfter {
		t.Fatalf("child reported %d commits, want at least %d", commits, killAfter)
	}
	return reported
}

// assertZombie checks in the process table that the child is dead (a
// zombie waiting for Wait), where there is a /proc to look in.
func assertZombie(t *testing.T, pid int) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return
	}
	stat := fmt.Sprintf("/proc/%d/stat", pid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		data, err := os.ReadFile(stat)
		if err != nil {
			t.Fatalf("child %d is not in the process table before Wait: %v", pid, err)
		}
		// The state follows the command name, which is in parentheses.
		if fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:])); len(fields) > 0 && fields[0] == "Z" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d still runs after SIGKILL: %s", pid, data)
		}
	}
}

// checkAfterCrash reopens the journal and checks that it is intact and
// holds every batch up to at least reported, and at most ahead events
// more, whole and without gaps.
func checkAfterCrash(t *testing.T, path string, reported, ahead uint64) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("reopening after the kill: %v", err)
	}
	defer db.Close()
	var integrity string
	if err := db.write.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("integrity_check = %q, %v", integrity, err)
	}
	// The columns, not the decoded events: this reads every row each round.
	rows, err := db.read.QueryContext(ctx, "SELECT pos, key, seq FROM events ORDER BY pos")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seqs := map[string]uint64{}
	var pos uint64
	for rows.Next() {
		var p, seq uint64
		var key string
		if err := rows.Scan(&p, &key, &seq); err != nil {
			t.Fatal(err)
		}
		if p != pos+1 {
			t.Fatalf("Pos %d follows %d", p, pos)
		}
		if seq != seqs[key]+1 {
			t.Fatalf("Seq %d of %q follows %d", seq, key, seqs[key])
		}
		pos, seqs[key] = p, seq
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if last := mustRead(t, db, bridge.EventQuery{After: pos - 1}); len(last) != 1 || last[0].Pos != pos || last[0].Seq != seqs[last[0].Key] {
		t.Fatalf("the last event reads back as %+v", last)
	}
	// The child prints after each commit: without a commit delay at most
	// one more batch than it reported can have committed, and only whole
	// batches.
	if pos < reported || pos > reported+ahead || pos%crashBatch != 0 {
		t.Fatalf("journal ends at Pos %d; the child reported %d committed (batches of %d)", pos, reported, crashBatch)
	}
	var count uint64
	if err := db.read.QueryRowContext(ctx, "SELECT count(*) FROM events").Scan(&count); err != nil || count != pos {
		t.Fatalf("%d event rows for Pos 1-%d, %v", count, pos, err)
	}
	assertCounters(t, db, pos, seqs)
	t.Logf("after the kill: %d events, the child reported %d", pos, reported)
}
