package bridge_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/checkpoint"
	"github.com/acphost/acphost/internal/waitfor"
	"github.com/acphost/acphost/journal"
)

// userRepo runs git in the user's repository dir, with a config of the
// test's and no optional locks (so reading changes nothing).
func userRepo(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_OPTIONAL_LOCKS=0",
		"GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// repoState is what of the user's repository nothing of ours may change:
// status, HEAD, the stash and the index file's bytes.
func repoState(t *testing.T, dir string) string {
	t.Helper()
	index, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	return userRepo(t, dir, "status", "--porcelain", "--untracked-files=all") + userRepo(t, dir, "rev-parse", "HEAD") +
		userRepo(t, dir, "stash", "list") + string(index)
}

// hostWithJournal starts a Host on the journal at path, its events
// drained; stop shuts it down and closes the journal, as an app quitting.
func hostWithJournal(t *testing.T, path string) (*bridge.Host, *journal.DB, func()) {
	t.Helper()
	db, err := journal.Open(waitfor.Context(t), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := bridge.NewHost(&bridge.HostOptions{Journal: db})
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for range h.Events() {
		}
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h.Shutdown(ctx)
		waitfor.Closed(t, drained, "the Host's events to end")
		db.Close()
	}
	t.Cleanup(stop)
	return h, db, stop
}

// TestRestoreAfterAppRestart: the app quits after a turn and starts again
// on the same journal and cache directory; the journal has the turn's
// changes, and the restore brings the workspace back, the user's
// repository (status, HEAD, stash, index) as it was.
func TestRestoreAfterAppRestart(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the checkpoints' default place
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	userRepo(t, dir, "init", "-q")
	for name, content := range map[string]string{"a.txt": "old\n", "gone.txt": "bye\n", "staged.txt": "v1\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	userRepo(t, dir, "add", ".")
	userRepo(t, dir, "commit", "-qm", "base")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("stashed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	userRepo(t, dir, "stash", "-q")
	if err := os.WriteFile(filepath.Join(dir, "staged.txt"), []byte("v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	userRepo(t, dir, "add", "staged.txt")
	state := repoState(t, dir)

	journalPath := filepath.Join(t.TempDir(), "journal.db")
	bin := acptest.BuildBinary(t)
	script := acptest.WriteScript(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Terminal: &acptest.Terminal{Command: "sh", Args: []string{"-c", "printf 'new\\n' > a.txt && rm gone.txt && printf 'x\\n' > made.txt"}, Cwd: dir}},
	}}}})
	cfg := bridge.SessionConfig{Cwd: dir, Key: "restart", Policy: bridge.Policy{Mode: bridge.ModeBuild}, Checkpoints: &checkpoint.Options{}}
	ctx := waitfor.Context(t)

	h1, _, quit := hostWithJournal(t, journalPath)
	b1, err := h1.Start(ctx, bridge.Config{ID: "before", Terminals: &terminal.Options{},
		Transport: &acpclient.CommandTransport{Path: bin, Args: []string{"-script", script}}})
	if err != nil {
		t.Fatal(err)
	}
	s1, err := b1.OpenSession(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s1.Prompt(ctx, acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "made.txt")); string(b) != "x\n" {
		t.Fatalf("the turn did not run: made.txt = %q", b)
	}
	quit()

	h2, db2, _ := hostWithJournal(t, journalPath)
	events, err := db2.ReadEvents(ctx, bridge.EventQuery{Key: "restart"})
	if err != nil {
		t.Fatal(err)
	}
	var turn *bridge.Changes
	for _, ev := range events {
		if ev.Kind == bridge.KindChanges && ev.Changes.Op == "turn" {
			turn = ev.Changes
		}
	}
	if turn == nil || len(turn.Files) != 3 {
		t.Fatalf("the journal's changes of the turn = %+v", turn)
	}
	b2, err := h2.Start(ctx, bridge.Config{ID: "after", Transport: &acpclient.CommandTransport{Path: bin, Args: []string{"-script", acptest.WriteScript(t, acptest.Script{})}}})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := b2.OpenSession(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Restore(ctx, 1, false); err != nil {
		t.Fatalf("Restore after the restart: %v", err)
	}
	for name, want := range map[string]string{"a.txt": "old\n", "gone.txt": "bye\n", "staged.txt": "v2\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s after the restore = %q, %v; want %q", name, b, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); !os.IsNotExist(err) {
		t.Errorf("made.txt after the restore: %v", err)
	}
	if got := repoState(t, dir); got != state {
		t.Errorf("the user's repository changed:\n%q\nwant\n%q", got, state)
	}
}
