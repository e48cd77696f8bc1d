package checkpoint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// populate writes a workspace with text, binary, executable, nested and
// symlinked entries (one link points out of the workspace).
func populate(t *testing.T, ws string) {
	t.Helper()
	write(t, filepath.Join(ws, "text.txt"), "line 1\r\nline 2\n", 0o644)
	write(t, filepath.Join(ws, "run.sh"), "#!/bin/sh\necho hi\n", 0o755)
	write(t, filepath.Join(ws, "deep/er/bin.dat"), "\x00\xff\x10binary", 0o644)
	write(t, filepath.Join(ws, "empty"), "", 0o644)
	if err := os.Symlink("/etc/passwd", filepath.Join(ws, "outside")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("deep/er", filepath.Join(ws, "inside")); err != nil {
		t.Fatal(err)
	}
}

func TestRestoreByteIdentical(t *testing.T) {
	for _, repo := range []bool{false, true} {
		name := map[bool]string{false: "plain directory", true: "git repository"}[repo]
		t.Run(name, func(t *testing.T) {
			ws := tempDir(t)
			if repo {
				userGit(t, ws, "init", "-q")
			}
			populate(t, ws)
			want := tree(t, ws, false)
			s := open(t, ws, Options{})
			before := snap(t, s, "before")
			if got := lsTree(t, s, before.ID); slices.Contains(got, "deep/er/bin.dat/") || !slices.Contains(got, "outside") {
				t.Fatalf("recorded %q", got)
			}
			// The turn deletes everything, and writes through nothing.
			entries, _ := os.ReadDir(ws)
			for _, e := range entries {
				if e.Name() != ".git" {
					if err := os.RemoveAll(filepath.Join(ws, e.Name())); err != nil {
						t.Fatal(err)
					}
				}
			}
			write(t, filepath.Join(ws, "new.txt"), "new", 0o600)
			snap(t, s, "end")

			done, err := s.Restore(testCtx(t), before.ID, false)
			if err != nil {
				t.Fatal(err)
			}
			sameTree(t, "restored", tree(t, ws, false), want)
			if b, err := os.ReadFile("/etc/passwd"); err == nil && len(b) > 0 {
				// The link was stored as a link: nothing was read through it.
				out, _ := s.git(testCtx(t), nil, "cat-file", "-p", before.ID+":outside")
				if string(out) != "/etc/passwd" {
					t.Errorf("the symlink was stored as %q", out)
				}
			}
			// The restore can itself be undone.
			if _, err := s.Restore(testCtx(t), done.Undo, false); err != nil {
				t.Fatal(err)
			}
			sameTree(t, "undone", tree(t, ws, false), map[string]string{"new.txt": "-rw-r--r-- new"})
		})
	}
}

func TestRestoreConflict(t *testing.T) {
	ws := tempDir(t)
	write(t, filepath.Join(ws, "a.txt"), "a0", 0o644)
	write(t, filepath.Join(ws, "b.txt"), "b0", 0o644)
	write(t, filepath.Join(ws, "mine.txt"), "m0", 0o644)
	s := open(t, ws, Options{})
	before := snap(t, s, "before")
	write(t, filepath.Join(ws, "a.txt"), "a1", 0o644)
	write(t, filepath.Join(ws, "b.txt"), "b1", 0o644)
	snap(t, s, "end")
	// The user edits one file the turn changed, and one it did not.
	write(t, filepath.Join(ws, "b.txt"), "b2 by the user", 0o644)
	write(t, filepath.Join(ws, "mine.txt"), "m1 by the user", 0o644)
	edited := tree(t, ws, false)

	for range 2 { // a refused restore leaves the last checkpoint as it was
		_, err := s.Restore(testCtx(t), before.ID, false)
		var conflict *ConflictError
		if !errors.As(err, &conflict) || !reflect.DeepEqual(conflict.Paths, []string{"b.txt"}) {
			t.Fatalf("Restore = %v, want a conflict on b.txt", err)
		}
		sameTree(t, "after the refused restore", tree(t, ws, false), edited)
	}

	if _, err := s.RevertFile(testCtx(t), "a.txt", before.ID, false); err != nil {
		t.Fatalf("reverting a.txt, which the user left alone: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "a0" {
		t.Errorf("a.txt = %q", b)
	}
	// The revert kept the user's b.txt a change of theirs: still a conflict.
	if _, err := s.Restore(testCtx(t), before.ID, false); !errors.As(err, new(*ConflictError)) {
		t.Fatalf("Restore after the revert = %v, want a conflict", err)
	}
	done, err := s.Restore(testCtx(t), before.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	got := tree(t, ws, false)
	if got["b.txt"] != "-rw-r--r-- b0" || got["mine.txt"] != "-rw-r--r-- m1 by the user" {
		t.Errorf("after the forced restore: %q", got)
	}
	out, _ := s.git(testCtx(t), nil, "cat-file", "-p", done.Undo+":b.txt")
	if string(out) != "b2 by the user" {
		t.Errorf("the checkpoint before the forced restore holds b.txt = %q", out)
	}
}

// racingRunner changes a file just before the restore's read-tree runs, as
// a command still running in the workspace would.
type racingRunner struct {
	path string
	done bool
}

func (r *racingRunner) Run(ctx context.Context, args, env []string, stdin []byte) ([]byte, error) {
	if !r.done && slices.Contains(args, "read-tree") && slices.Contains(args, "-m") {
		r.done = true
		if err := os.WriteFile(r.path, []byte("written during the restore"), 0o644); err != nil {
			return nil, err
		}
	}
	return Local{}.Run(ctx, args, env, stdin)
}

func TestRestoreRacingWrite(t *testing.T) {
	ws := tempDir(t)
	p := filepath.Join(ws, "a.txt")
	write(t, p, "a0", 0o644)
	s := open(t, ws, Options{Runner: &racingRunner{path: p}})
	before := snap(t, s, "before")
	write(t, p, "a1 longer", 0o644)
	snap(t, s, "end")

	_, err := s.Restore(testCtx(t), before.ID, false)
	var conflict *ConflictError
	if !errors.As(err, &conflict) || !reflect.DeepEqual(conflict.Paths, []string{"a.txt"}) {
		t.Fatalf("Restore during a write = %v, want a conflict on a.txt", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "written during the restore" {
		t.Errorf("a.txt = %q: the concurrent write was overwritten", b)
	}
}

// TestNestedRepository: a repository inside the workspace (or a
// submodule's work tree) is recorded file by file, its .git left out and
// left alone.
func TestNestedRepository(t *testing.T) {
	ws := tempDir(t)
	userGit(t, ws, "init", "-q")
	nested := filepath.Join(ws, "vendor/lib")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	userGit(t, nested, "init", "-q")
	write(t, filepath.Join(nested, ".gitignore"), "*.o\n", 0o644)
	write(t, filepath.Join(nested, "lib.go"), "package lib\n", 0o644)
	write(t, filepath.Join(nested, "lib.o"), "object", 0o644)
	userGit(t, nested, "add", ".")
	userGit(t, nested, "commit", "-qm", "lib")
	empty := filepath.Join(ws, "fresh")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	userGit(t, empty, "init", "-q")
	write(t, filepath.Join(empty, "deeper/x.txt"), "x", 0o644)
	nestedState, outerState := gitState(t, nested), gitState(t, ws)

	s := open(t, ws, Options{})
	before := snap(t, s, "before")
	want := []string{"fresh/deeper/x.txt", "vendor/lib/.gitignore", "vendor/lib/lib.go"}
	if got := lsTree(t, s, before.ID); !reflect.DeepEqual(got, want) {
		t.Fatalf("recorded %q, want %q", got, want)
	}
	write(t, filepath.Join(nested, "lib.go"), "package lib // changed\n", 0o644)
	write(t, filepath.Join(nested, "new.go"), "package lib\n", 0o644)
	end := snap(t, s, "end")
	changes, err := s.Changes(testCtx(t), before.ID, end.ID)
	if err != nil || len(changes) != 2 || changes[0].Path != "vendor/lib/lib.go" || changes[1].Path != "vendor/lib/new.go" {
		t.Fatalf("changes = %+v, %v", changes, err)
	}
	if _, err := s.Restore(testCtx(t), before.ID, false); err != nil {
		t.Fatal(err)
	}
	if got, want := gitState(t, nested), nestedState; got != want {
		t.Errorf("the nested repository changed:\n%s\nwant\n%s", got, want)
	}
	if got, want := gitState(t, ws), outerState; got != want {
		t.Errorf("the outer repository changed:\n%s\nwant\n%s", got, want)
	}
}

// TestRebaseInProgress: a repository stopped in a rebase conflict is
// recorded and restored like any other, and stays stopped exactly there.
func TestRebaseInProgress(t *testing.T) {
	ws := tempDir(t)
	userGit(t, ws, "init", "-q", "-b", "main")
	write(t, filepath.Join(ws, "f.txt"), "base\n", 0o644)
	userGit(t, ws, "add", ".")
	userGit(t, ws, "commit", "-qm", "base")
	userGit(t, ws, "checkout", "-q", "-b", "topic")
	write(t, filepath.Join(ws, "f.txt"), "topic\n", 0o644)
	userGit(t, ws, "commit", "-qam", "topic")
	userGit(t, ws, "checkout", "-q", "main")
	write(t, filepath.Join(ws, "f.txt"), "main\n", 0o644)
	userGit(t, ws, "commit", "-qam", "main")
	userGit(t, ws, "checkout", "-q", "topic")
	cmdFails(t, ws, "rebase", "main")
	if _, err := os.Stat(filepath.Join(ws, ".git/rebase-merge")); err != nil {
		t.Fatalf("no rebase in progress: %v", err)
	}
	state, files := gitState(t, ws), tree(t, ws, false)
	s := open(t, ws, Options{})
	before := snap(t, s, "before")
	write(t, filepath.Join(ws, "f.txt"), "resolved by the agent\n", 0o644)
	snap(t, s, "end")
	if _, err := s.Restore(testCtx(t), before.ID, false); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "restored", tree(t, ws, false), files)
	if got := gitState(t, ws); got != state {
		t.Errorf("the repository in its rebase changed:\n%s\nwant\n%s", got, state)
	}
}

// TestRestoreKeepsTheFileCount: after a restore to a checkpoint with
// fewer files, the cap on files counts the files the index holds now.
func TestRestoreKeepsTheFileCount(t *testing.T) {
	ws := tempDir(t)
	write(t, filepath.Join(ws, "a.txt"), "a", 0o644)
	write(t, filepath.Join(ws, "b.txt"), "b", 0o644)
	s := open(t, ws, Options{MaxFiles: 3})
	two := snap(t, s, "two")
	write(t, filepath.Join(ws, "c.txt"), "c", 0o644)
	snap(t, s, "three")
	if _, err := s.Restore(testCtx(t), two.ID, false); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "d.txt"), "d", 0o644)
	if cp := snap(t, s, "after"); len(cp.Skipped) != 0 {
		t.Errorf("three files with a cap of 3: skipped %+v", cp.Skipped)
	}
}
