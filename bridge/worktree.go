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

// Worktree asks for a session that works in a git worktree of its own, on
// a new branch of the repository at SessionConfig.Cwd, so that sessions
// on one repository do not step on each other. The worktree is added
// where the agent runs (on its SSH host for an agent launched over SSH)
// before the session is created, and the session's cwd is the worktree's
// directory for Cwd (its top, or the same subdirectory). The user's own
// checkout is left as it is: its HEAD, index, stash and files; git's
// worktree list and the new branch are the only changes to the
// repository, and the repository's hooks run as for any git worktree add.
//
// The record keeps the worktree (Record.Worktree): the session reopened
// under its Key works in it again (its Worktree option is not applied a
// second time), and Session.Delete or Host.DeleteSession removes it,
// keeping the branch unless DeleteBranch. A worktree with changes not
// committed to its branch is not removed: the delete fails, saying so,
// with the session closed and its record kept, to delete again once the
// changes are committed or discarded. A fork (Session.Fork) works in its
// parent's worktree and never removes it, unless ForkOptions.Worktree
// gives it one of its own.
type Worktree struct {
	// Branch is the new branch; "" means acphost/KEY, KEY the session's
	// key. A branch that exists is refused.
	Branch string `json:"branch"`
	// Base is the commit the branch starts at (a branch name, tag or
	// hash); "" means the repository's HEAD, and then a repository with
	// uncommitted changes to tracked files is refused, since the worktree
	// would not have them: commit them, or name the commit ("HEAD") to
	// start from it anyway.
	Base string `json:"base,omitempty"`
	// Dir is the worktree's absolute path on the agent's host; it must
	// not exist. "" means
	// ${XDG_DATA_HOME:-~/.local/share}/acphost/worktrees/REPO-HASH/BRANCH.
	Dir string `json:"dir"`
	// DeleteBranch deletes the branch too when the session is deleted.
	DeleteBranch bool `json:"deleteBranch,omitempty"`
	// Repo is the top directory of the repository the worktree was added
	// to; the bridge sets it, in the record.
	Repo string `json:"repo"`
}

// hostRunner runs programs where the bridge's agent runs: on its SSH host,
// or on this machine.
func (b *Bridge) hostRunner() checkpoint.Runner {
	b.mu.Lock()
	tr := b.cfg.Transport
	b.mu.Unlock()
	if ssh := sshTransportOf(tr); ssh != nil {
		return checkpoint.SSH{Dial: ssh.SSHClient}
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
