package checkpoint

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/internal/nonroot"
)

// TestSymlinkOutOfTheWorkspace: a symlink to a file outside the workspace
// is recorded and restored as the link, and its target is never written:
// not when the turn wrote through the link (a change outside the
// workspace, not recorded), not when the restore puts the link back.
func TestSymlinkOutOfTheWorkspace(t *testing.T) {
	ws, outside := tempDir(t), tempDir(t)
	target := filepath.Join(outside, "target.txt")
	write(t, target, "outside\n", 0o644)
	if err := os.Symlink(target, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "a.txt"), "a\n", 0o644)
	s := open(t, ws, Options{})
	before := snap(t, s, "before")
	// The turn writes through the link: the workspace is unchanged.
	write(t, target, "written through the link\n", 0o644)
	if changes, err := s.Changes(testCtx(t), before.ID, snap(t, s, "through").ID); err != nil || len(changes) != 0 {
		t.Fatalf("a write through the link changed the workspace: %+v, %v", changes, err)
	}
	// The turn replaces the link with a file and edits a.txt.
	if err := os.Remove(filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "link"), "a file now\n", 0o644)
	write(t, filepath.Join(ws, "a.txt"), "b\n", 0o644)
	snap(t, s, "end")
	if _, err := s.Restore(testCtx(t), before.ID, false); err != nil {
		t.Fatal(err)
	}
	if got, err := os.Readlink(filepath.Join(ws, "link")); err != nil || got != target {
		t.Errorf("link restored as %q, %v; want a symlink to %s", got, err, target)
	}
	if b, _ := os.ReadFile(target); string(b) != "written through the link\n" {
		t.Errorf("the restore wrote the link's target: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "a\n" {
		t.Errorf("a.txt = %q", b)
	}
}

// TestReadOnlyWorkspace: a workspace nobody may write is recorded (the
// checkpoints live elsewhere); a restore fails with git's refusal, changes
// nothing, and leaves the Store right: the next checkpoint finds the
// workspace as it was.
func TestReadOnlyWorkspace(t *testing.T) {
	if !nonroot.Run(t) {
		return
	}
	ws := tempDir(t)
	write(t, filepath.Join(ws, "a.txt"), "a\n", 0o644)
	write(t, filepath.Join(ws, "sub", "b.txt"), "b\n", 0o644)
	s := open(t, ws, Options{})
	before := snap(t, s, "before")
	write(t, filepath.Join(ws, "a.txt"), "changed\n", 0o644)
	write(t, filepath.Join(ws, "sub", "new.txt"), "new\n", 0o644)
	if err := os.Remove(filepath.Join(ws, "sub", "b.txt")); err != nil {
		t.Fatal(err)
	}
	end := snap(t, s, "end")
	// Read-only from now on: every directory and file.
	setWritable(t, ws, false)
	t.Cleanup(func() { setWritable(t, ws, true) })
	files := tree(t, ws, false)
	ro := snap(t, s, "read-only")
	if ro.ID != end.ID {
		t.Errorf("a read-only workspace recorded as %s, want the unchanged %s", ro.ID, end.ID)
	}
	_, err := s.Restore(testCtx(t), before.ID, false)
	if err == nil || !strings.Contains(err.Error(), "Permission denied") {
		t.Fatalf("Restore in a read-only workspace = %v, want git's permission error", err)
	}
	var conflict *ConflictError
	if errors.As(err, &conflict) {
		t.Errorf("a read-only workspace reported as a conflict: %v", err)
	}
	sameTree(t, "after the failed restore", tree(t, ws, false), files)
	if _, err := s.RevertFile(testCtx(t), "a.txt", before.ID, true); err == nil {
		t.Error("a forced RevertFile in a read-only workspace succeeded")
	}
	sameTree(t, "after the failed revert", tree(t, ws, false), files)
	after := snap(t, s, "after")
	if changes, err := s.Changes(testCtx(t), end.ID, after.ID); err != nil || len(changes) != 0 {
		t.Errorf("after the failed restores the Store sees changes %+v, %v; want none", changes, err)
	}
	// Writable again, the restore goes through.
	setWritable(t, ws, true)
	if _, err := s.Restore(testCtx(t), before.ID, false); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "restored", tree(t, ws, false), map[string]string{"a.txt": "-rw-r--r-- a\n", "sub/b.txt": "-rw-r--r-- b\n"})
}

// setWritable gives dir's directories and files their owner's write bit,
// or takes it away.
func setWritable(t *testing.T, dir string, w bool) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil || info.Mode()&fs.ModeSymlink != 0 {
			return err
		}
		mode := info.Mode().Perm() &^ 0o222
		if w {
			mode |= 0o200
		}
		return os.Chmod(p, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
}
