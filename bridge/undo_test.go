package bridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/checkpoint"
	"github.com/acphost/acphost/internal/waitfor"
)

// journaledRestore returns the From of the last restore event of key the
// journal holds, waiting for it to be written.
func journaledRestore(t *testing.T, j Journal, key string, n int) string {
	t.Helper()
	var from string
	waitfor.Until(t, fmt.Sprintf("restore event number %d in the journal", n), func() bool {
		evs, err := j.ReadEvents(context.Background(), EventQuery{Key: key, Limit: 10000})
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, ev := range evs {
			if ev.Kind == KindChanges && ev.Changes.Op == "restore" {
				seen++
				from = ev.Changes.From
			}
		}
		return seen == n
	})
	return from
}

// readFiles reads the workspace's test files ("" for a missing one).
func readFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, name := range []string{"a.txt", "gone.txt", "made.txt", "keep.txt"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		got[name] = string(b)
	}
	return got
}

// TestUndoARestoreAfterARestart: a restore's From, read back from the
// journal by an app that restarted, undoes the restore in the session
// opened again under its key; the user's own edit of another file stays,
// an edit of a file the undo changes is a conflict until forced, and the
// undo's own From redoes the restore.
func TestUndoARestoreAfterARestart(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cpDir := filepath.Join(t.TempDir(), "checkpoints")
	for name, content := range map[string]string{"a.txt": "old\n", "gone.txt": "bye\n", "keep.txt": "keep\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{WriteFile: &acptest.WriteFile{Path: filepath.Join(dir, "a.txt"), Content: "new\n"}},
		{Terminal: &acptest.Terminal{Command: "sh", Args: []string{"-c", "rm gone.txt && printf 'made\\n' > made.txt"}, Cwd: dir}},
	}}}}
	j := newMemJournal()
	ctx := waitfor.Context(t)
	h, rec := newHostAndRecorder(t, &HostOptions{Journal: j})
	cfg := agentConfig(t, "undo", script)
	cfg.Terminals = &terminal.Options{}
	b, err := h.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctx, SessionConfig{Cwd: dir, Key: "undo-session", Policy: Policy{Mode: ModeBuild}, Checkpoints: &checkpoint.Options{Dir: cpDir}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctx, acpclient.TextBlock("one")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("the turn's changes", func(ev Event) bool { return ev.Kind == KindChanges && ev.Changes.Op == "turn" })
	ended := readFiles(t, dir)
	if err := s.Restore(ctx, 1, false); err != nil {
		t.Fatal(err)
	}
	before := map[string]string{"a.txt": "old\n", "gone.txt": "bye\n", "made.txt": "", "keep.txt": "keep\n"}
	if got := readFiles(t, dir); !reflect.DeepEqual(got, before) {
		t.Fatalf("after the restore: %q, want %q", got, before)
	}
	from := journaledRestore(t, j, "undo-session", 1)
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// The app restarts: another Host on the same journal.
	h2, rec2 := newHostAndRecorder(t, &HostOptions{Journal: j})
	b2, err := h2.Start(context.Background(), agentConfig(t, "undo-again", acptest.Script{}))
	if err != nil {
		t.Fatal(err)
	}
	s2, err := b2.OpenSession(ctx, SessionConfig{Key: "undo-session", Checkpoints: &checkpoint.Options{Dir: cpDir}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s2.RestoreCheckpoint(ctx, from, false); err != nil {
		t.Fatalf("RestoreCheckpoint(the restore's From) after the restart: %v", err)
	}
	want := ended
	want["keep.txt"] = "mine\n"
	if got := readFiles(t, dir); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the undo: %q, want %q", got, want)
	}
	undo := rec2.waitFor("the undo's changes event", func(ev Event) bool { return ev.Kind == KindChanges && ev.Changes.Op == "restore" })
	if undo.Changes.Restored != 0 || undo.Changes.From == "" || len(undo.Changes.Files) != 3 {
		t.Errorf("the undo's event = %+v, want the 3 files of the restore, Restored 0 and a From", undo.Changes)
	}

	// Redo: the undo's From, over a user's edit of a file it sets back.
	// keep.txt is a conflict too: the user's edit is theirs since the last
	// checkpoint, and the undo's From recorded it.
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var conflict *checkpoint.ConflictError
	if err := s2.RestoreCheckpoint(ctx, undo.Changes.From, false); !errors.As(err, &conflict) || !reflect.DeepEqual(conflict.Paths, []string{"a.txt", "keep.txt"}) {
		t.Fatalf("redo over the user's edit = %v, want a conflict on a.txt and keep.txt", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "edited\n" {
		t.Fatalf("a conflicting redo changed a.txt to %q", b)
	}
	if err := s2.RestoreCheckpoint(ctx, undo.Changes.From, true); err != nil {
		t.Fatal(err)
	}
	before["keep.txt"] = "mine\n"
	if got := readFiles(t, dir); !reflect.DeepEqual(got, before) {
		t.Fatalf("after the forced redo: %q, want %q", got, before)
	}
	if err := s2.RestoreCheckpoint(ctx, "", false); err == nil {
		t.Error("RestoreCheckpoint without an ID succeeded")
	}
	if err := s2.RestoreCheckpoint(ctx, "--orphan", false); err == nil {
		t.Error("RestoreCheckpoint of an option-like ID succeeded")
	}
}

// TestRestoreCheckpointRefusedDuringATurn: an undo waits for no turn.
func TestRestoreCheckpointRefusedDuringATurn(t *testing.T) {
	dir := t.TempDir()
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{{WaitCancel: true}}}}}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), agentConfig(t, "busy-undo", script))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: dir, Checkpoints: &checkpoint.Options{Dir: filepath.Join(t.TempDir(), "cp")}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(waitfor.Context(t))
	done := make(chan error, 1)
	go func() {
		_, err := s.Prompt(ctx, acpclient.TextBlock("wait"))
		done <- err
	}()
	rec.waitFor("turn start", func(ev Event) bool { return ev.Kind == KindTurnStart })
	if err := s.RestoreCheckpoint(waitfor.Context(t), "turn-1-before", true); !errors.Is(err, ErrBusy) {
		t.Errorf("RestoreCheckpoint during a turn = %v, want ErrBusy", err)
	}
	cancel()
	waitfor.Recv(t, done, "the cancelled turn's end")
}
