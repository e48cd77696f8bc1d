package bridge

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/checkpoint"
)

// forkWriteScript: a forking agent whose prompt "NAME" writes NAME.txt in
// the session's cwd.
func forkWriteScript(names ...string) acptest.Script {
	s := acptest.Script{Initialize: acptest.InitializeScript{AgentCapabilities: withFork}}
	for _, n := range names {
		s.Prompts = append(s.Prompts, acptest.Turn{Match: n, Steps: []acptest.Step{
			{WriteFile: &acptest.WriteFile{Path: acptest.CwdToken + "/" + n + ".txt", Content: n + "\n"}},
		}})
	}
	return s
}

// forkProgramHost starts a Host with one bridge on script, run as a
// program: sessions then serve file calls in their cwd by default.
func forkProgramHost(t *testing.T, script acptest.Script) (*Bridge, *recorder) {
	t.Helper()
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), agentConfig(t, "f", script))
	if err != nil {
		t.Fatal(err)
	}
	return b, rec
}

// turnChanges waits for the changes event of turn n of key.
func turnChanges(rec *recorder, key string, n uint64) *Changes {
	return rec.waitFor("the changes of turn "+key, func(ev Event) bool {
		return ev.Kind == KindChanges && ev.Key == key && ev.Changes.Op == "turn" && ev.Turn == n
	}).Changes
}

// TestForkInheritsCheckpoints: a fork of a session with checkpoints
// records its own turns, in a git directory of its own, and the parent's
// go on in theirs.
func TestForkInheritsCheckpoints(t *testing.T) {
	if _, err := os.Stat("/usr/bin/git"); err != nil {
		if _, err := os.Stat("/bin/git"); err != nil {
			t.Skip("git is not installed")
		}
	}
	b, rec := forkProgramHost(t, forkWriteScript("one", "two", "three"))
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "cp")
	parent, err := b.OpenSession(ctxT(t), SessionConfig{Key: "parent", Cwd: cwd, Policy: Policy{Mode: ModeFull}, Checkpoints: &checkpoint.Options{Dir: cp}})
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, parent, "one")
	turnChanges(rec, "parent", 1)
	child, err := parent.Fork(ctxT(t), ForkOptions{Key: "child"})
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, child, "two")
	if ch := turnChanges(rec, "child", 2); len(ch.Files) != 1 || ch.Files[0].Path != "two.txt" {
		t.Errorf("the fork's turn changes = %+v, want two.txt", ch.Files)
	}
	if _, err := os.Stat(cp + "-child"); err != nil {
		t.Errorf("the fork's git directory: %v", err)
	}
	if diff, err := child.TurnDiff(ctxT(t), 2); err != nil || !strings.Contains(diff, "+two") {
		t.Errorf("the fork's TurnDiff(2) = %q, %v", diff, err)
	}
	mustPrompt(t, parent, "three")
	if ch := turnChanges(rec, "parent", 2); len(ch.Files) != 1 || ch.Files[0].Path != "three.txt" {
		t.Errorf("the parent's second turn changes = %+v, want three.txt", ch.Files)
	}
	if err := child.Restore(ctxT(t), 2, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cwd, "two.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the fork's restore left two.txt: %v", err)
	}
}

// TestForkOfAWorktreeSession: a fork works in its parent's worktree and
// does not remove it when deleted; a fork asked for a worktree of its own
// gets one, from the parent's branch, removed with the fork.
func TestForkOfAWorktreeSession(t *testing.T) {
	repo := userRepo(t)
	state := repoState(t, repo)
	b, rec := forkProgramHost(t, forkWriteScript("one", "two", "three"))
	wt, wt2 := filepath.Join(t.TempDir(), "wt"), filepath.Join(t.TempDir(), "wt2")
	parent, err := b.OpenSession(ctxT(t), SessionConfig{Key: "parent", Cwd: repo, Policy: Policy{Mode: ModeFull},
		Worktree: &Worktree{Branch: "parent", Dir: wt, DeleteBranch: true}, Checkpoints: &checkpoint.Options{Dir: filepath.Join(t.TempDir(), "cp")}})
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, parent, "one")
	same, err := parent.Fork(ctxT(t), ForkOptions{Key: "same"})
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, same, "two")
	if _, err := os.Stat(filepath.Join(wt, "two.txt")); err != nil {
		t.Fatalf("the fork did not work in the parent's worktree: %v", err)
	}
	if err := same.Delete(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt); err != nil {
		t.Fatalf("deleting the fork removed the parent's worktree: %v", err)
	}
	// The parent's branch, committed, is the new worktree's base.
	gitIn(t, wt, "add", ".")
	gitIn(t, wt, "commit", "-qm", "parent's work")
	own, err := parent.Fork(ctxT(t), ForkOptions{Key: "own", Worktree: &Worktree{Branch: "own", Dir: wt2}})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(wt2, "one.txt")); err != nil || string(b) != "one\n" {
		t.Errorf("the fork's worktree lacks the parent's commit: %q, %v", b, err)
	}
	mustPrompt(t, own, "three")
	if ch := turnChanges(rec, "own", 2); len(ch.Files) != 1 || ch.Files[0].Path != "three.txt" {
		t.Errorf("the fork's changes in its worktree = %+v", ch.Files)
	}
	if _, err := os.Stat(filepath.Join(wt, "three.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the fork wrote in the parent's worktree: %v", err)
	}
	if err := os.Remove(filepath.Join(wt2, "three.txt")); err != nil {
		t.Fatal(err)
	}
	if err := own.Delete(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt2); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the fork's own worktree is still there: %v", err)
	}
	if got := strings.TrimSpace(gitIn(t, repo, "branch", "--list", "own")); got != "own" {
		t.Errorf("the fork's branch was not kept: %q", got)
	}
	if err := parent.Delete(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := repoState(t, repo); got != state {
		t.Errorf("the user's repository changed:\n%s\nwant\n%s", got, state)
	}
}
