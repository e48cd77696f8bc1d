package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// lineDiff lists the lines only one of two texts has.
func lineDiff(a, b string) string {
	in := map[string]int{}
	for _, l := range strings.Split(a, "\n") {
		in[l]++
	}
	for _, l := range strings.Split(b, "\n") {
		in[l]--
	}
	var out []string
	for l, n := range in {
		if n != 0 {
			out = append(out, fmt.Sprintf("%+d %s", n, l))
		}
	}
	return strings.Join(out, "\n")
}

// TestSubmodule: a submodule's work tree is recorded file by file (its
// .git file left out), its changes reported live, listed and restored, and
// neither the outer repository nor the submodule's (under .git/modules)
// changes.
func TestSubmodule(t *testing.T) {
	lib := tempDir(t)
	userGit(t, lib, "init", "-q")
	write(t, filepath.Join(lib, "lib.go"), "package lib\n", 0o644)
	write(t, filepath.Join(lib, "tool.sh"), "#!/bin/sh\n", 0o755)
	userGit(t, lib, "add", ".")
	userGit(t, lib, "commit", "-qm", "lib")
	ws := tempDir(t)
	userGit(t, ws, "init", "-q")
	write(t, filepath.Join(ws, "main.go"), "package main\n", 0o644)
	userGit(t, ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "sub")
	userGit(t, ws, "commit", "-qam", "with a submodule")
	sub := filepath.Join(ws, "sub")
	if fi, err := os.Lstat(filepath.Join(sub, ".git")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the submodule's .git is not a file: %v", err)
	}
	state, subState := gitState(t, ws), userGit(t, sub, "status", "--porcelain")+userGit(t, sub, "rev-parse", "HEAD")
	files := tree(t, ws, false)

	s := open(t, ws, Options{})
	before := snap(t, s, "before")
	want := []string{".gitmodules", "main.go", "sub/lib.go", "sub/tool.sh"}
	if got := lsTree(t, s, before.ID); !reflect.DeepEqual(got, want) {
		t.Fatalf("recorded %q, want %q", got, want)
	}
	log := newWatchLog()
	stop, err := s.Watch(testCtx(t), log.report)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	write(t, filepath.Join(sub, "lib.go"), "package lib // the agent\n", 0o644)
	write(t, filepath.Join(sub, "new.go"), "package lib\n", 0o644)
	if err := os.Remove(filepath.Join(sub, "tool.sh")); err != nil {
		t.Fatal(err)
	}
	// The watch follows the submodule's work tree, not its git directory.
	log.waitFor(t, "the submodule's files reported live", func(files map[string]string, _ error) bool {
		return reflect.DeepEqual(files, map[string]string{"sub/lib.go": "M", "sub/new.go": "A", "sub/tool.sh": "D"})
	})
	stop()
	end := snap(t, s, "end")
	changes, err := s.Changes(testCtx(t), before.ID, end.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, c.Status+" "+c.Path)
	}
	if want := []string{"M sub/lib.go", "A sub/new.go", "D sub/tool.sh"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("changes = %q, want %q", got, want)
	}
	if _, err := s.Restore(testCtx(t), before.ID, false); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "restored", tree(t, ws, false), files)
	if got := gitState(t, ws); got != state {
		t.Errorf("the outer repository (with the submodule's git directory) changed:\n%s\nwant\n%s", got, state)
	}
	if got := userGit(t, sub, "status", "--porcelain") + userGit(t, sub, "rev-parse", "HEAD"); got != subState {
		t.Errorf("the submodule says\n%s\nwant\n%s", got, subState)
	}
}

// repoState is what a user sees of their repository: status, HEAD,
// refs, stash and the index file's bytes (gitState, which reads every
// object, is slow on 20,000 of them).
func repoState(t *testing.T, dir string) string {
	t.Helper()
	index, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(index)
	return userGit(t, dir, "status", "--porcelain", "--untracked-files=all") + userGit(t, dir, "rev-parse", "HEAD") +
		userGit(t, dir, "for-each-ref") + userGit(t, dir, "stash", "list") + "index " + hex.EncodeToString(sum[:]) + "\n"
}

// TestLargeTreeFewChanges: in a tree of 20,000 files, a turn that
// changes a handful lists exactly those, and a restore brings them back.
func TestLargeTreeFewChanges(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 20,000 files")
	}
	ws := tempDir(t)
	userGit(t, ws, "init", "-q")
	const files, perDir = 20000, 100
	for i := range files {
		p := filepath.Join(ws, fmt.Sprintf("d%03d/f%05d.txt", i/perDir, i))
		if i%perDir == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	userGit(t, ws, "add", ".")
	// The user's git would pack 20,000 loose objects in the background.
	userGit(t, ws, "-c", "gc.auto=0", "commit", "-qm", "20k")
	state := repoState(t, ws)
	s := open(t, ws, Options{})
	before := snap(t, s, "before")
	if n := len(lsTree(t, s, before.ID)); n != files {
		t.Fatalf("recorded %d files, want %d", n, files)
	}
	write(t, filepath.Join(ws, "d000/f00000.txt"), "changed\n", 0o644)
	write(t, filepath.Join(ws, "d150/f15042.txt"), "changed\n", 0o755)
	write(t, filepath.Join(ws, "d199/new.txt"), "new\n", 0o644)
	write(t, filepath.Join(ws, "brand/new/dir.txt"), "new\n", 0o644)
	for _, p := range []string{"d077/f07700.txt", "d120/f12001.txt"} {
		if err := os.Remove(filepath.Join(ws, p)); err != nil {
			t.Fatal(err)
		}
	}
	end := snap(t, s, "end")
	changes, err := s.Changes(testCtx(t), before.ID, end.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, c.Status+" "+c.Path)
	}
	want := []string{"A brand/new/dir.txt", "M d000/f00000.txt", "D d077/f07700.txt", "D d120/f12001.txt", "M d150/f15042.txt", "A d199/new.txt"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("changes = %q\nwant %q", got, want)
	}
	if _, err := s.Restore(testCtx(t), before.ID, false); err != nil {
		t.Fatal(err)
	}
	if got := repoState(t, ws); got != state {
		t.Errorf("after the restore the user's repository differs:\n%s", lineDiff(state, got))
	}
}
