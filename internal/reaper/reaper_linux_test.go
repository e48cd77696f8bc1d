//go:build linux

package reaper

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestChildrenListsAChild: a child of this process is listed, by the
// kernel's children files or by the /proc scan, and /proc/PID/stat's parent
// is read past a command name that holds ") ".
func TestChildrenListsAChild(t *testing.T) {
	odd := filepath.Join(t.TempDir(), "odd ) (name")
	if err := os.Symlink("/bin/sleep", odd); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(odd, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	self := os.Getpid()
	for _, list := range [][]int{children(self), scanChildren(self)} {
		if !slices.Contains(list, cmd.Process.Pid) {
			t.Errorf("children %v do not hold child %d", list, cmd.Process.Pid)
		}
	}
	if ppid, ok := parentOf(cmd.Process.Pid, make([]byte, 512)); !ok || ppid != self {
		t.Errorf("parent of %d: %d, %v; want %d", cmd.Process.Pid, ppid, ok, self)
	}
}
