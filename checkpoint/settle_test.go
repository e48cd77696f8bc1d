package checkpoint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/acphost/acphost/internal/sshdtest"
)

// TestQuietSnapshots: while a Watch runs, a Snapshot after one that saw
// nothing change does not walk the workspace, and one after a change
// records exactly what a Store without a watch records, whatever the
// change (a write just before the snapshot, a new tree, a mode, a
// directory moved out of or into the workspace). Once the watch stops,
// the snapshots walk again.
func TestQuietSnapshots(t *testing.T) {
	t.Run("local", func(t *testing.T) { testQuietSnapshots(t, Local{}) })
	t.Run("sshd", func(t *testing.T) {
		if _, err := exec.LookPath("inotifywait"); err != nil {
			t.Skip("inotifywait (inotify-tools) is not installed on this host")
		}
		srv := sshdtest.Start(t)
		client := srv.Dial(t)
		shell := &Shell{}
		defer shell.Close()
		testQuietSnapshots(t, SSH{Dial: func(context.Context) (*ssh.Client, error) { return client, nil }, Shell: shell})
	})
}

func testQuietSnapshots(t *testing.T, r Runner) {
	ws := tempDir(t)
	outside := tempDir(t)
	write(t, filepath.Join(ws, ".gitignore"), "*.log\n", 0o644)
	write(t, filepath.Join(ws, "a.txt"), "a\n", 0o644)
	write(t, filepath.Join(ws, "dir/b.txt"), "b\n", 0o644)
	write(t, filepath.Join(outside, "in/c.txt"), "c\n", 0o644)
	s := open(t, ws, Options{Runner: r})
	plain := open(t, ws, Options{}) // walks every time: the reference
	log := newWatchLog()
	stop, err := s.Watch(testCtx(t), log.report)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	n := 0
	check := func(what string, wantWalk bool) {
		t.Helper()
		n++
		walks := s.walks
		name := "q" + string(rune('a'+n))
		cp := snap(t, s, name)
		for _, ref := range []string{"refs/acphost/" + name, "HEAD"} {
			if out, err := s.git(testCtx(t), nil, "rev-parse", ref); err != nil || strings.TrimSpace(string(out)) != cp.ID {
				t.Errorf("%s: %s is %s (%v), want %s", what, ref, out, err, cp.ID)
			}
		}
		if walked := s.walks > walks; walked != wantWalk {
			t.Errorf("%s: walked = %v, want %v", what, walked, wantWalk)
		}
		ref := snap(t, plain, "ref")
		if got, want := treeObjects(t, s, cp.ID), treeObjects(t, plain, ref.ID); got != want {
			t.Errorf("%s: the checkpoint holds\n%s\nwithout a watch:\n%s", what, got, want)
		}
	}
	check("the first snapshot", true)
	check("nothing changed", false)
	write(t, filepath.Join(ws, "debug.log"), "ignored\n", 0o644)
	write(t, filepath.Join(ws, "e.txt"), "e\n", 0o644)
	// Reports come in order: once e.txt's is out, git has said debug.log
	// is ignored.
	log.waitFor(t, "e.txt's report", func(files map[string]string, _ error) bool { return files["e.txt"] != "" })
	check("an ignored file written, not yet known as ignored", true)
	write(t, filepath.Join(ws, "debug.log"), "ignored again\n", 0o644)
	check("an ignored file written again", false)
	write(t, filepath.Join(ws, ".gitignore"), "*.tmp\n", 0o644)
	check("the ignore rules changed", true)
	write(t, filepath.Join(ws, "debug.log"), "no longer ignored\n", 0o644)
	check("a file written that is no longer ignored", true)
	write(t, filepath.Join(ws, "a.txt"), "a2\n", 0o644)
	check("a file written just before", true)
	check("nothing changed since", false)
	write(t, filepath.Join(ws, "new/deep/d.txt"), "d\n", 0o644)
	check("a new tree", true)
	if err := os.Chmod(filepath.Join(ws, "a.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	check("a mode changed", true)
	if err := os.Rename(filepath.Join(ws, "dir"), filepath.Join(outside, "dir")); err != nil {
		t.Fatal(err)
	}
	check("a directory moved out", true)
	if err := os.Rename(filepath.Join(outside, "in"), filepath.Join(ws, "in")); err != nil {
		t.Fatal(err)
	}
	check("a directory moved in", true)
	if err := os.Remove(filepath.Join(ws, "new/deep/d.txt")); err != nil {
		t.Fatal(err)
	}
	check("a file removed", true)
	check("nothing changed at the end", false)

	stop()
	write(t, filepath.Join(ws, "a.txt"), "a3\n", 0o644)
	check("a write after the watch stopped", true)
	check("no watch", true)
}

// treeObjects lists a checkpoint's files: mode, object and path.
func treeObjects(t *testing.T, s *Store, id string) string {
	t.Helper()
	out, err := s.git(testCtx(t), nil, "ls-tree", "-r", "--full-tree", id)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
