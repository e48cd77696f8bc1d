package bridge

import (
	"path"

	"github.com/acphost/acphost/checkpoint"
)

// forkCheckpoints returns the checkpoint options a fork of the session
// gets: the parent's, for the parent's workspace, so the fork's turns are
// recorded as the parent's are. A fork in a new worktree of its own
// (ForkOptions.Worktree) records that worktree instead: its cwd.
func (s *Session) forkCheckpoints(newWorktree bool) *checkpoint.Options {
	if s.cfg.Checkpoints == nil {
		return nil
	}
	o := *s.cfg.Checkpoints
	if newWorktree {
		o.Workspace = ""
	}
	return &o
}

// forkOwn gives a fork's Store a git directory of its own, apart from its
// parent's, which may record the same workspace: an explicit Dir gets
// "-KEY" appended (KEY the fork's key), an explicit Name too; the default
// Dir is named by the key already. A fork opened again after a restart
// with its parent's options finds the same directory.
func (c *sessionCheckpoints) forkOwn(opt *checkpoint.Options) {
	s := c.s
	s.mu.Lock()
	fork := s.fork != nil
	s.mu.Unlock()
	if !fork {
		return
	}
	if opt.Dir != "" {
		opt.Dir = path.Clean(opt.Dir) + "-" + s.key
	}
	if opt.Name != "" {
		opt.Name += "-" + s.key
	}
}
