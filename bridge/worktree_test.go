package bridge

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/checkpoint"
	"github.com/acphost/acphost/internal/sshdtest"
	"github.com/acphost/acphost/internal/waitfor"
)

// userRepo makes a git repository with one commit and returns it.
func userRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(dir, "repo")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "init", "-q", "-b", "main")
	for name, content := range map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, dir, "add", ".")
	gitIn(t, dir, "commit", "-qm", "base")
	// A stash and an untracked file: they must stay as they are.
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("stashed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "stash", "-q")
	if err := os.WriteFile(filepath.Join(dir, "untracked.txt"), []byte("u\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// repoState is what the user sees of their repository: HEAD, the
// branch, the status, the stash and the index file's bytes.
func repoState(t *testing.T, dir string) string {
	t.Helper()
	index, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	return gitIn(t, dir, "rev-parse", "HEAD") + gitIn(t, dir, "symbolic-ref", "HEAD") +
		gitIn(t, dir, "status", "--porcelain") + gitIn(t, dir, "stash", "list") + string(index)
}

// worktreeScript's turn writes agent.txt in the session's cwd.
var worktreeScript = acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
	{WriteFile: &acptest.WriteFile{Path: acptest.CwdToken + "/agent.txt", Content: "agent\n"}},
}}}}

// TestWorktreePerSession: the session works in a new worktree on a new
// branch, for the agent, its file calls and its checkpoints; reopened
// after a restart it works there again; deleting it refuses to lose the
// worktree's uncommitted changes, then removes the worktree and keeps the
// branch; the user's checkout never changes.
func TestWorktreePerSession(t *testing.T) {
	repo := userRepo(t)
	state := repoState(t, repo)
	wt := filepath.Join(t.TempDir(), "wt")
	j := newMemJournal()
	ctx := waitfor.Context(t)
	h, rec := newHostAndRecorder(t, &HostOptions{Journal: j})
	b, err := h.Start(context.Background(), agentConfig(t, "wt", worktreeScript))
	if err != nil {
		t.Fatal(err)
	}
	cfg := SessionConfig{Key: "wt-session", Cwd: filepath.Join(repo, "sub"), Policy: Policy{Mode: ModeFull},
		Worktree: &Worktree{Branch: "feature/x", Dir: wt}, Checkpoints: &checkpoint.Options{Dir: filepath.Join(t.TempDir(), "cp")}}
	s, err := b.OpenSession(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctx, acpclient.TextBlock("write")); err != nil {
		t.Fatal(err)
	}
	// The session's cwd is the same subdirectory, in the worktree.
	if b, err := os.ReadFile(filepath.Join(wt, "sub", "agent.txt")); err != nil || string(b) != "agent\n" {
		t.Fatalf("the agent's file in the worktree: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(repo, "sub", "agent.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the agent wrote in the user's checkout: %v", err)
	}
	ev := rec.waitFor("the turn's changes", func(ev Event) bool { return ev.Kind == KindChanges && ev.Changes.Op == "turn" })
	if len(ev.Changes.Files) != 1 || ev.Changes.Files[0].Path != "agent.txt" {
		t.Errorf("the turn's changes in the worktree = %+v", ev.Changes.Files)
	}
	if got := strings.TrimSpace(gitIn(t, wt, "symbolic-ref", "HEAD")); got != "refs/heads/feature/x" {
		t.Errorf("the worktree's HEAD = %s", got)
	}
	r, ok, err := j.LoadSession(ctx, "wt-session")
	if err != nil || !ok || r.Cwd != filepath.Join(wt, "sub") || r.Worktree == nil || r.Worktree.Dir != wt || r.Worktree.Repo != repo || r.Worktree.Branch != "feature/x" {
		t.Fatalf("journaled record: %+v (worktree %+v), %v, %v", r, r.Worktree, ok, err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// The app restarts and opens the session with the same config.
	h2, _ := newHostAndRecorder(t, &HostOptions{Journal: j})
	b2, err := h2.Start(context.Background(), agentConfig(t, "wt", worktreeScript))
	if err != nil {
		t.Fatal(err)
	}
	s2, err := b2.OpenSession(ctx, cfg)
	if err != nil {
		t.Fatalf("reopening the worktree session: %v", err)
	}
	if r, _, _ := j.LoadSession(ctx, "wt-session"); r.Cwd != filepath.Join(wt, "sub") {
		t.Errorf("reopened in %s", r.Cwd)
	}
	if diff, err := s2.TurnDiff(ctx, 1); err != nil || !strings.Contains(diff, "+agent") {
		t.Errorf("TurnDiff after the restart = %q, %v", diff, err)
	}
	err = s2.Delete(ctx)
	if err == nil || !strings.Contains(err.Error(), "not committed") {
		t.Fatalf("Delete with the agent's file not committed = %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(wt, "sub", "agent.txt")); err != nil {
		t.Fatalf("the refused delete lost the agent's file: %v", err)
	}
	gitIn(t, wt, "add", ".")
	gitIn(t, wt, "commit", "-qm", "agent's work")
	if err := h2.DeleteSession(ctx, "wt-session"); err != nil {
		t.Fatalf("DeleteSession once committed: %v", err)
	}
	if _, err := os.Stat(wt); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the worktree is still there: %v", err)
	}
	if _, ok, _ := j.LoadSession(ctx, "wt-session"); ok {
		t.Error("the record is still in the journal")
	}
	if got := gitIn(t, repo, "show", "feature/x:sub/agent.txt"); got != "agent\n" {
		t.Errorf("the kept branch has agent.txt = %q", got)
	}
	if got := repoState(t, repo); got != state {
		t.Errorf("the user's repository changed:\n%s\nwant\n%s", got, state)
	}
}

// TestWorktreeRefusals: a Cwd that is not a repository, a branch that
// exists and uncommitted changes are refused, saying so, and make nothing.
func TestWorktreeRefusals(t *testing.T) {
	repo := userRepo(t)
	gitIn(t, repo, "branch", "taken")
	h, _ := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), agentConfig(t, "wt-refuse", acptest.Script{}))
	if err != nil {
		t.Fatal(err)
	}
	plain := t.TempDir()
	for _, c := range []struct {
		name, cwd, want string
		w               Worktree
	}{
		{"not a repository", plain, "is not in a git repository", Worktree{}},
		{"branch exists", repo, "branch taken exists", Worktree{Branch: "taken"}},
		{"bad branch name", repo, "is not a branch name", Worktree{Branch: "a..b"}},
	} {
		c.w.Dir = filepath.Join(t.TempDir(), "wt")
		_, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: c.cwd, Worktree: &c.w})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: OpenSession = %v, want %q", c.name, err, c.want)
		}
		if _, err := os.Stat(c.w.Dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a worktree was made: %v", c.name, err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("dirty\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	state := repoState(t, repo)
	dir := filepath.Join(t.TempDir(), "wt")
	_, err = b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: repo, Worktree: &Worktree{Branch: "dirty", Dir: dir}})
	if err == nil || !strings.Contains(err.Error(), "uncommitted changes") || !strings.Contains(err.Error(), "a.txt") {
		t.Errorf("a dirty repository: OpenSession = %v", err)
	}
	if out := gitIn(t, repo, "branch", "--list", "dirty"); out != "" {
		t.Errorf("the refused worktree left a branch: %q", out)
	}
	// Naming the base starts from it anyway; the branch goes on delete
	// when asked.
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: repo, Worktree: &Worktree{Branch: "dirty", Base: "HEAD", Dir: dir, DeleteBranch: true}})
	if err != nil {
		t.Fatalf("with Base HEAD: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(b) != "a\n" {
		t.Errorf("the worktree's a.txt = %q, %v", b, err)
	}
	if err := s.Delete(waitfor.Context(t)); err != nil {
		t.Fatal(err)
	}
	if out := gitIn(t, repo, "branch", "--list", "dirty"); out != "" {
		t.Errorf("DeleteBranch kept the branch: %q", out)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the worktree is still there: %v", err)
	}
	if got := repoState(t, repo); got != state {
		t.Errorf("the user's repository changed:\n%s\nwant\n%s", got, state)
	}
}

// TestWorktreeOnTheSSHHost: for an agent launched over SSH the worktree
// is added on that host, by default in the login's data directory, on the
// branch acphost/KEY; the session's commands run in it; deleting the
// session removes it there and, asked to, the branch.
func TestWorktreeOnTheSSHHost(t *testing.T) {
	srv := sshdtest.Start(t)
	repo := userRepo(t)
	state := repoState(t, repo)
	script := acptest.WriteScript(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Terminal: &acptest.Terminal{Command: "sh", Args: []string{"-c", "printf 'remote\\n' > remote.txt"}}},
	}}}})
	tr := &acpclient.SSHTransport{Client: srv.Dial(t), Path: acptest.BuildBinary(t), Args: []string{"-script", script}}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), Config{ID: "remote-wt", Transport: tr, Terminals: &terminal.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := waitfor.Context(t)
	s, err := b.OpenSession(ctx, SessionConfig{Key: "remote", Cwd: repo, Policy: Policy{Mode: ModeBuild},
		Worktree: &Worktree{DeleteBranch: true}, Checkpoints: &checkpoint.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctx, acpclient.TextBlock("run")); err != nil {
		t.Fatal(err)
	}
	ev := rec.waitFor("the turn's changes", func(ev Event) bool { return ev.Kind == KindChanges && ev.Changes.Op == "turn" })
	if len(ev.Changes.Files) != 1 || ev.Changes.Files[0].Path != "remote.txt" {
		t.Errorf("the turn's changes = %+v", ev.Changes.Files)
	}
	parents, err := filepath.Glob(filepath.Join(srv.Home, ".local", "share", "acphost", "worktrees", "repo-*", "acphost-remote"))
	if err != nil || len(parents) != 1 {
		t.Fatalf("worktrees in the login's data directory: %v, %v", parents, err)
	}
	wt := parents[0]
	if b, err := os.ReadFile(filepath.Join(wt, "remote.txt")); err != nil || string(b) != "remote\n" {
		t.Fatalf("the command's file in the worktree: %q, %v", b, err)
	}
	if got := strings.TrimSpace(gitIn(t, wt, "symbolic-ref", "HEAD")); got != "refs/heads/acphost/remote" {
		t.Errorf("the worktree's HEAD = %s", got)
	}
	if err := os.Remove(filepath.Join(wt, "remote.txt")); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the worktree is still there: %v", err)
	}
	if out := gitIn(t, repo, "branch", "--list", "acphost/remote"); out != "" {
		t.Errorf("DeleteBranch kept the branch: %q", out)
	}
	if got := repoState(t, repo); got != state {
		t.Errorf("the user's repository changed:\n%s\nwant\n%s", got, state)
	}
}

// TestWorktreeOfASessionThatFailsToOpen: the worktree made for a session
// the agent refuses to create is removed again, with its branch.
func TestWorktreeOfASessionThatFailsToOpen(t *testing.T) {
	repo := userRepo(t)
	state := repoState(t, repo)
	h, _ := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), agentConfig(t, "wt-fail", acptest.Script{NewSession: acptest.NewSessionScript{RequireAuth: "*"}}))
	if err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	if _, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: repo, Worktree: &Worktree{Branch: "failed", Dir: wt}}); err == nil {
		t.Fatal("OpenSession succeeded with an agent that refuses session/new")
	}
	if _, err := os.Stat(wt); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the worktree is still there: %v", err)
	}
	if out := gitIn(t, repo, "branch", "--list", "failed"); out != "" {
		t.Errorf("the branch is still there: %q", out)
	}
	if got := repoState(t, repo); got != state {
		t.Errorf("the user's repository changed:\n%s\nwant\n%s", got, state)
	}
}

// TestDeleteKeepsAWorktreeItCannotReach: a journaled session whose
// worktree is on the host of a bridge that is not running is not
// deleted: the error says so, and the record stays.
func TestDeleteKeepsAWorktreeItCannotReach(t *testing.T) {
	j := newMemJournal()
	ctx := waitfor.Context(t)
	rec := Record{Key: "far", Bridge: "gone", Cwd: "/wt/far", Worktree: &Worktree{Branch: "far", Dir: "/wt/far", Repo: "/repo"}}
	if err := j.SaveSession(ctx, "far", rec); err != nil {
		t.Fatal(err)
	}
	h, _ := newHostAndRecorder(t, &HostOptions{Journal: j})
	if err := h.DeleteSession(ctx, "far"); err == nil || !strings.Contains(err.Error(), "/wt/far") || !strings.Contains(err.Error(), "not running") {
		t.Errorf("DeleteSession = %v, want a refusal naming the worktree and the bridge", err)
	}
	if _, ok, _ := j.LoadSession(ctx, "far"); !ok {
		t.Error("the record was deleted with its worktree left behind")
	}
}
