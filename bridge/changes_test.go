package bridge

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/checkpoint"
	"github.com/acphost/acphost/internal/waitfor"
)

// gitIn runs git in the user's repository dir, with a config of the test's.
func gitIn(t *testing.T, dir string, args ...string) string {
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

// checkpointFixture is a session of a fake agent whose first turn writes
// a.txt through fs/write_text_file and, with a command of its own, deletes
// gone.txt and makes made.txt; the workspace is a git repository.
type checkpointFixture struct {
	dir, cpDir string
	s          *Session
	rec        *recorder
	status     string // the user's git status before the turn
}

func newCheckpointFixture(t *testing.T) *checkpointFixture {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &checkpointFixture{dir: dir, cpDir: filepath.Join(t.TempDir(), "checkpoints")}
	gitIn(t, dir, "init", "-q")
	for name, content := range map[string]string{"a.txt": "old\n", "gone.txt": "bye\n", "keep.txt": "keep\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, dir, "add", ".")
	gitIn(t, dir, "commit", "-qm", "base")
	f.status = gitIn(t, dir, "status", "--porcelain") + gitIn(t, dir, "rev-parse", "HEAD")
	script := acptest.Script{Prompts: []acptest.Turn{{Match: "one", Steps: []acptest.Step{
		{WriteFile: &acptest.WriteFile{Path: filepath.Join(dir, "a.txt"), Content: "new\nlines\n"}},
		{Terminal: &acptest.Terminal{Command: "sh", Args: []string{"-c", "rm gone.txt && printf 'made\\n' > made.txt"}, Cwd: dir}},
	}}, {Steps: []acptest.Step{{Text: "nothing to do"}}}}}
	var h *Host
	h, f.rec = newHostAndRecorder(t, nil)
	cfg := agentConfig(t, "ckpt", script)
	cfg.Terminals = &terminal.Options{}
	b, err := h.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.s, err = b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: dir, Key: "ckpt-session",
		Policy: Policy{Mode: ModeBuild}, Checkpoints: &checkpoint.Options{Dir: f.cpDir}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// changes returns the changes events of op, in order.
func (f *checkpointFixture) changes(op string) []*Changes {
	var list []*Changes
	for _, ev := range f.rec.snapshot() {
		if ev.Kind == KindChanges && ev.Changes.Op == op {
			list = append(list, ev.Changes)
		}
	}
	return list
}

func TestCheckpointsReportAndRestoreATurn(t *testing.T) {
	f := newCheckpointFixture(t)
	ctx := waitfor.Context(t)
	if _, err := f.s.Prompt(ctx, acpclient.TextBlock("one")); err != nil {
		t.Fatal(err)
	}
	end := f.rec.waitFor("the turn's changes", func(ev Event) bool {
		return ev.Kind == KindChanges && ev.Changes.Op == "turn"
	})
	if end.Turn != 1 {
		t.Errorf("changes event of turn %d, want 1", end.Turn)
	}
	want := []checkpoint.Change{
		{Status: "M", Path: "a.txt", Added: 2, Removed: 1},
		{Status: "D", Path: "gone.txt", Removed: 1},
		{Status: "A", Path: "made.txt", Added: 1},
	}
	if !reflect.DeepEqual(end.Changes.Files, want) {
		t.Fatalf("files = %+v\nwant %+v", end.Changes.Files, want)
	}
	writes := f.changes("write")
	if len(writes) != 1 || writes[0].Path != filepath.Join(f.dir, "a.txt") || writes[0].OldText != "old\n" || writes[0].NewText != "new\nlines\n" || writes[0].Created {
		t.Errorf("write events = %+v", writes)
	}
	diff, err := f.s.TurnDiff(ctx, 1, filepath.Join(f.dir, "a.txt"))
	if err != nil || !strings.Contains(diff, "\n-old\n+new\n+lines\n") || strings.Contains(diff, "made.txt") {
		t.Errorf("TurnDiff(1, a.txt) = %q, %v", diff, err)
	}

	// The user edits a file the turn made: the restore is a conflict.
	if err := os.WriteFile(filepath.Join(f.dir, "made.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var conflict *checkpoint.ConflictError
	if err := f.s.Restore(ctx, 1, false); !errors.As(err, &conflict) || !reflect.DeepEqual(conflict.Paths, []string{"made.txt"}) {
		t.Fatalf("Restore over the user's edit = %v, want a conflict on made.txt", err)
	}
	if err := f.s.RevertFile(ctx, 1, "a.txt", false); err != nil {
		t.Fatalf("RevertFile(a.txt): %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "a.txt")); string(b) != "old\n" {
		t.Errorf("a.txt after the revert = %q", b)
	}
	if err := f.s.Restore(ctx, 1, true); err != nil {
		t.Fatalf("forced Restore: %v", err)
	}
	if got := gitIn(t, f.dir, "status", "--porcelain") + gitIn(t, f.dir, "rev-parse", "HEAD"); got != f.status {
		t.Errorf("after the restore the user's repository says\n%s\nwant\n%s", got, f.status)
	}
	restores := f.changes("restore")
	if len(restores) != 2 || restores[1].Restored != 1 || len(restores[1].Files) != 2 {
		t.Errorf("restore events = %+v", restores)
	}
}

// TestCheckpointsSurviveARestart: a session opened again under the same
// key, by another host, finds the turn's checkpoints.
func TestCheckpointsSurviveARestart(t *testing.T) {
	f := newCheckpointFixture(t)
	ctx := waitfor.Context(t)
	if _, err := f.s.Prompt(ctx, acpclient.TextBlock("one")); err != nil {
		t.Fatal(err)
	}
	f.rec.waitFor("the turn's changes", func(ev Event) bool { return ev.Kind == KindChanges && ev.Changes.Op == "turn" })
	h, _ := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), agentConfig(t, "again", acptest.Script{}))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctx, SessionConfig{Cwd: f.dir, Key: "ckpt-session", Checkpoints: &checkpoint.Options{Dir: f.cpDir}})
	if err != nil {
		t.Fatal(err)
	}
	if diff, err := s.TurnDiff(ctx, 1); err != nil || !strings.Contains(diff, "made.txt") {
		t.Fatalf("TurnDiff after the restart = %q, %v", diff, err)
	}
	if err := s.Restore(ctx, 1, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "gone.txt")); err != nil {
		t.Errorf("gone.txt not restored: %v", err)
	}
}

func TestCheckpointsOffByDefault(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), agentConfig(t, "off", acptest.Script{}))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("hi")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	for _, ev := range rec.snapshot() {
		if ev.Kind == KindChanges {
			t.Errorf("changes event without Checkpoints: %+v", ev.Changes)
		}
	}
	if err := s.Restore(waitfor.Context(t), 1, false); err == nil || !strings.Contains(err.Error(), "checkpoints are off") {
		t.Errorf("Restore without Checkpoints = %v", err)
	}
}

func TestRestoreRefusedDuringATurn(t *testing.T) {
	dir := t.TempDir()
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{{WaitCancel: true}}}}}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), agentConfig(t, "busy", script))
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
	if err := s.Restore(waitfor.Context(t), 1, true); !errors.Is(err, ErrBusy) {
		t.Errorf("Restore during a turn = %v, want ErrBusy", err)
	}
	cancel()
	waitfor.Recv(t, done, "the cancelled turn's end")
}

// TestWriteEvents: a write's event carries the text before and after; a
// new file says so; a file that was not text leaves both texts out.
func TestWriteEvents(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "latin1.txt"), []byte("caf\xe9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{WriteFile: &acptest.WriteFile{Path: filepath.Join(dir, "new.txt"), Content: "fresh\n"}},
		{WriteFile: &acptest.WriteFile{Path: filepath.Join(dir, "latin1.txt"), Content: "café\n"}},
	}}}}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), agentConfig(t, "writes", script))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: dir, Policy: Policy{Mode: ModeFull},
		Checkpoints: &checkpoint.Options{Dir: filepath.Join(t.TempDir(), "cp")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("write")); err != nil {
		t.Fatal(err)
	}
	var writes []Changes
	for _, ev := range rec.snapshot() {
		if ev.Kind == KindChanges && ev.Changes.Op == "write" {
			writes = append(writes, *ev.Changes)
		}
	}
	want := []Changes{
		{Op: "write", Path: filepath.Join(dir, "new.txt"), Created: true, NewText: "fresh\n"},
		{Op: "write", Path: filepath.Join(dir, "latin1.txt")},
	}
	if !reflect.DeepEqual(writes, want) {
		t.Errorf("write events = %+v\nwant %+v", writes, want)
	}
}

// TestUserEditsBetweenTurns: the workspace's watch runs on between turns
// and lets the checkpoint before a turn skip its walk when nothing
// changed; a file the user edits between turns is still in the next
// turn's checkpoint before it, so neither turn's changes list it.
func TestUserEditsBetweenTurns(t *testing.T) {
	f := newCheckpointFixture(t)
	ctx := waitfor.Context(t)
	turnChanges := func(n uint64) *Changes {
		t.Helper()
		return f.rec.waitFor("the changes of turn "+strconv.FormatUint(n, 10), func(ev Event) bool {
			return ev.Kind == KindChanges && ev.Changes.Op == "turn" && ev.Turn == n
		}).Changes
	}
	if _, err := f.s.Prompt(ctx, acpclient.TextBlock("one")); err != nil {
		t.Fatal(err)
	}
	one := turnChanges(1)
	if err := os.WriteFile(filepath.Join(f.dir, "keep.txt"), []byte("the user's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Prompt(ctx, acpclient.TextBlock("two")); err != nil {
		t.Fatal(err)
	}
	two := turnChanges(2)
	if len(two.Files) != 0 || two.From == one.To {
		t.Errorf("turn 2 changed nothing, but its changes are %+v from %s (turn 1 ended at %s)", two.Files, two.From, one.To)
	}
	if _, err := f.s.Prompt(ctx, acpclient.TextBlock("three")); err != nil {
		t.Fatal(err)
	}
	if three := turnChanges(3); len(three.Files) != 0 || three.From != two.To {
		t.Errorf("turn 3 after no edit: changes %+v from %s, want none from %s", three.Files, three.From, two.To)
	}
}

// wrapGitStatus puts a git on PATH that appends a line to the returned
// file for every git status (a walk of the workspace), then runs then
// (shell; "" for nothing) and the real git.
func wrapGitStatus(t *testing.T, then string) string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	bin, log := t.TempDir(), filepath.Join(t.TempDir(), "walks")
	script := "#!/bin/sh\ncase \" $* \" in *\" status \"*) echo >> " + log + "; " + then + " ;; esac\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

// countWalks puts a git first on PATH that counts the walks of the
// workspace (git status) in a file, and returns their count so far; the
// Stores still run it with checkpoint.Local, as apps do.
func countWalks(t *testing.T) func() int {
	log := wrapGitStatus(t, "")
	return func() int {
		b, _ := os.ReadFile(log)
		return len(b)
	}
}

// The watch starts before a session's first walk, so a turn that changed
// nothing ends with a checkpoint that does not walk the workspace again.
func TestFirstTurnEndsWithoutAWalk(t *testing.T) {
	walks := countWalks(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), agentConfig(t, "quiet", acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{{Text: "nothing to do"}}}}}))
	if err != nil {
		t.Fatal(err)
	}
	s := openCheckpointed(t, b, dir)
	if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("one")); err != nil {
		t.Fatal(err)
	}
	ch := rec.waitFor("the changes of turn 1", func(ev Event) bool {
		return ev.Kind == KindChanges && ev.Changes.Op == "turn" && ev.Turn == 1
	}).Changes
	if len(ch.Files) != 0 || ch.From != ch.To {
		t.Errorf("a turn that changed nothing: changes %+v from %s to %s", ch.Files, ch.From, ch.To)
	}
	if n := walks(); n != 1 {
		t.Errorf("the first turn walked the workspace %d times, want once (before it)", n)
	}
}
