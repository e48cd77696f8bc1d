package fakebin

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/waitfor"
)

// WaitGone waits, bounded (waitfor.Bound, polling every few ms), until pid has left
// the process table, a zombie counting as gone; it fails the test when it
// has not. A pid that is still there when the test ends is killed.
func WaitGone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(waitfor.Bound); running(pid); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s (pid %d) is still running after %v", what, pid, waitfor.Bound)
		}
	}
}

// PidFrom waits, bounded (waitfor.Bound), for a program to write a pid
// into path.
func PidFrom(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(waitfor.Bound); ; time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("%s holds %q, not a pid", path, b)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for a pid to be written to %s", waitfor.Bound, path)
		}
	}
}

func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(b), ") Z ")
}

// PidsFrom waits, bounded (waitfor.Bound), for a program to write a line
// of pids, separated by spaces, into path.
func PidsFrom(t *testing.T, path string) []int {
	t.Helper()
	for deadline := time.Now().Add(waitfor.Bound); ; time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			var pids []int
			for _, f := range strings.Fields(string(b)) {
				pid, _ := strconv.Atoi(f)
				pids = append(pids, pid)
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for a line of pids to be written to %s", waitfor.Bound, path)
		}
	}
}
