package checkpoint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/acphost/acphost/internal/sshdtest"
)

// TestOverSSHD records, lists and restores a workspace over a real sshd,
// the git directory in the login's cache directory (skipped without sshd),
// its commands through a Shell as a bridge runs them.
func TestOverSSHD(t *testing.T) {
	srv := sshdtest.Start(t)
	client := srv.Dial(t)
	shell := &Shell{}
	t.Cleanup(shell.Close)
	runner := SSH{Dial: func(context.Context) (*ssh.Client, error) { return client, nil }, Shell: shell}
	ws := tempDir(t)
	userGit(t, ws, "init", "-q")
	populate(t, ws)
	write(t, filepath.Join(ws, "big.bin"), strings.Repeat("x", 2000), 0o644) // never recorded, never touched
	state, want := gitState(t, ws), tree(t, ws, false)

	s, err := Open(testCtx(t), Options{Workspace: ws, Runner: runner, MaxFileSize: 1000})
	if err != nil {
		t.Fatalf("Open over ssh: %v; sshd: %s", err, srv.Log())
	}
	if !strings.HasPrefix(s.opt.Dir, filepath.Join(srv.Home, ".cache", "acphost", "checkpoints")+"/") {
		t.Errorf("git directory %s is not in the login's cache directory", s.opt.Dir)
	}
	before := snap(t, s, "before")
	if len(before.Skipped) != 1 || before.Skipped[0].Path != "big.bin" {
		t.Errorf("skipped over ssh = %+v, want big.bin", before.Skipped)
	}
	write(t, filepath.Join(ws, "text.txt"), "changed\n", 0o644)
	if err := os.Remove(filepath.Join(ws, "run.sh")); err != nil {
		t.Fatal(err)
	}
	end := snap(t, s, "end")
	changes, err := s.Changes(testCtx(t), before.ID, end.ID)
	if err != nil || len(changes) != 2 || changes[0].Path != "run.sh" || changes[0].Status != "D" || changes[1].Path != "text.txt" {
		t.Fatalf("changes = %+v, %v", changes, err)
	}
	if _, err := s.Restore(testCtx(t), before.ID, false); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "restored over ssh", tree(t, ws, false), want)
	if got := gitState(t, ws); got != state {
		t.Errorf("the user's repository changed:\n%s\nwant\n%s", got, state)
	}

	// A host without git: the login's PATH has none.
	noGit := SSH{Dial: runner.Dial}
	_, err = Open(testCtx(t), Options{Workspace: ws, Dir: filepath.Join(tempDir(t), "cp"), Runner: envRunner{noGit, "PATH=/nonexistent"}})
	if !errors.Is(err, ErrNoGit) {
		t.Errorf("Open on a host without git = %v, want ErrNoGit", err)
	}
}

// envRunner adds env entries to every command of another runner.
type envRunner struct {
	Runner
	env string
}

func (r envRunner) Run(ctx context.Context, args, env []string, stdin []byte) ([]byte, error) {
	return r.Runner.Run(ctx, args, append(env, r.env), stdin)
}
