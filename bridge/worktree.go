package bridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"strings"

	"github.com/acphost/acphost/checkpoint"
)

// hostRunner runs programs where the bridge's agent runs: on its SSH host
// (through the bridge's shell there), or on this machine.
func (b *Bridge) hostRunner() checkpoint.Runner {
	if ssh := sshTransportOf(b.transport()); ssh != nil {
		return checkpoint.SSH{Dial: ssh.SSHClient, Shell: &b.shell}
	}
	return checkpoint.Local{}
}

// worktreeGit runs git in dir on the host, with no optional lock (a git
// status then does not refresh the user's index).
func worktreeGit(ctx context.Context, r checkpoint.Runner, dir string, args ...string) (string, error) {
	out, err := r.Run(ctx, append([]string{"git", "-C", dir}, args...), []string{"GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}, nil)
	if errors.Is(err, exec.ErrNotFound) {
		return "", fmt.Errorf("git is not installed on the agent's host: %w", err)
	}
	return string(out), err
}

// addWorktree makes the worktree SessionConfig.Worktree asks for and moves
// the session into it, unless the session's record has one already.
func (s *Session) addWorktree(ctx context.Context) error {
	w := s.cfg.Worktree
	if w == nil || s.worktree != nil {
		return nil
	}
	if s.recorded != nil {
		return fmt.Errorf("bridge %s: session %s was recorded working in %s, without a worktree of its own: open it without Worktree", s.b.cfg.ID, s.key, s.recorded.Cwd)
	}
	made, cwd, err := createWorktree(ctx, s.b.hostRunner(), s.key, s.cfg.Cwd, *w)
	if err != nil {
		return fmt.Errorf("bridge %s: session %s: worktree: %w", s.b.cfg.ID, s.key, err)
	}
	s.worktree, s.cfg.Cwd = &made, cwd
	return nil
}

// createWorktree adds a worktree of the repository at cwd as w asks, and
// returns it as recorded and the session's cwd in it.
func createWorktree(ctx context.Context, r checkpoint.Runner, key, cwd string, w Worktree) (Worktree, string, error) {
	if !path.IsAbs(cwd) {
		return w, "", fmt.Errorf("the session's Cwd %q is not an absolute path", cwd)
	}
	out, err := worktreeGit(ctx, r, cwd, "rev-parse", "--show-toplevel", "--show-prefix")
	if err != nil {
		return w, "", fmt.Errorf("%s is not in a git repository: %w", cwd, err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 || !path.IsAbs(lines[0]) {
		return w, "", fmt.Errorf("%s is not in a git work tree (git says %q)", cwd, out)
	}
	w.Repo = lines[0]
	prefix := ""
	if len(lines) > 1 {
		prefix = strings.TrimSuffix(lines[1], "/")
	}
	if w.Branch == "" {
		w.Branch = "acphost/" + key
	}
	if _, err := worktreeGit(ctx, r, w.Repo, "check-ref-format", "--branch", w.Branch); err != nil || strings.HasPrefix(w.Branch, "-") {
		return w, "", fmt.Errorf("%q is not a branch name", w.Branch)
	}
	if strings.HasPrefix(w.Base, "-") {
		return w, "", fmt.Errorf("%q is not a commit", w.Base)
	}
	if _, err := worktreeGit(ctx, r, w.Repo, "rev-parse", "-q", "--verify", "refs/heads/"+w.Branch); err == nil {
		return w, "", fmt.Errorf("branch %s exists in %s: name another (Worktree.Branch)", w.Branch, w.Repo)
	}
	if w.Base == "" {
		dirty, err := worktreeGit(ctx, r, w.Repo, "status", "--porcelain", "--untracked-files=no")
		if err != nil {
			return w, "", err
		}
		if dirty != "" {
			return w, "", fmt.Errorf("%s has uncommitted changes the worktree would not have (%s): commit them, or set Worktree.Base to start from a commit anyway",
				w.Repo, strings.Join(strings.Fields(dirty), " "))
		}
	}
	if w.Dir == "" {
		data, err := r.Run(ctx, []string{"sh", "-c", `printf '%s' "${XDG_DATA_HOME:-$HOME/.local/share}"`}, nil, nil)
		if err != nil || !path.IsAbs(string(data)) {
			return w, "", fmt.Errorf("finding the host's data directory (%q): %v; set Worktree.Dir", data, err)
		}
		sum := sha256.Sum256([]byte(w.Repo))
		w.Dir = path.Join(string(data), "acphost", "worktrees", path.Base(w.Repo)+"-"+hex.EncodeToString(sum[:4]), strings.ReplaceAll(w.Branch, "/", "-"))
	}
	if !path.IsAbs(w.Dir) {
		return w, "", fmt.Errorf("Worktree.Dir %q is not an absolute path", w.Dir)
	}
	w.Dir = path.Clean(w.Dir)
	args := []string{"worktree", "add", "-q", "-b", w.Branch, w.Dir}
	if w.Base != "" {
		args = append(args, w.Base)
	}
	if _, err := worktreeGit(ctx, r, w.Repo, args...); err != nil {
		return w, "", fmt.Errorf("adding a worktree at %s on a new branch %s: %w", w.Dir, w.Branch, err)
	}
	return w, path.Join(w.Dir, prefix), nil
}

// removeWorktree removes a session's worktree (one already gone is
// forgotten by git) and, if asked, its branch. A worktree with changes
// not committed is kept, and that is the error.
func removeWorktree(ctx context.Context, r checkpoint.Runner, w *Worktree) error {
	if w == nil {
		return nil
	}
	if _, err := r.Run(ctx, []string{"test", "-d", w.Dir}, nil, nil); err != nil {
		if _, err := worktreeGit(ctx, r, w.Repo, "worktree", "prune"); err != nil {
			return fmt.Errorf("pruning the missing worktree %s: %w", w.Dir, err)
		}
	} else if _, err := worktreeGit(ctx, r, w.Repo, "worktree", "remove", w.Dir); err != nil {
		return fmt.Errorf("removing the worktree %s (changes not committed to branch %s are kept: commit or discard them, then delete again): %w", w.Dir, w.Branch, err)
	}
	if w.DeleteBranch {
		if _, err := worktreeGit(ctx, r, w.Repo, "branch", "-D", "--", w.Branch); err != nil {
			return fmt.Errorf("deleting branch %s: %w", w.Branch, err)
		}
	}
	return nil
}
