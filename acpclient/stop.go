package acpclient

import (
	"os/exec"
	"sync"
)

// stopCore is the one stop of a local process that agents (process),
// terminals (localCommand) and helper commands (Output) share: signals
// to the process group or through the reaper, ordered against the reap so
// that none reaches a reused id, and the reap that ends what the process
// left behind.
type stopCore struct {
	cmd    *exec.Cmd    // the process, or its reaper
	reaped func()       // tells the forker this child is gone
	link   *reaperLink  // nil without a reaper
	guard  *sentinel    // nil without one
	tree   *descendants // nil unless recorded (no reaper, not a helper)

	mu   sync.Mutex // orders signals against the reap
	done bool       // the leader has been reaped: its id is no longer ours
}

// reap waits for the leader, then ends what is left in its group, which
// the sentinel pins (while it lives, the group id cannot have been reused;
// without it the group is signalled only before the reap), and stops the
// sentinel. Under a reaper the whole tree is gone once the reaper exits.
// Descendants recorded outside the group are ended by endTree.
func (s *stopCore) reap() error {
	err := s.cmd.Wait()
	s.reaped()
	s.mu.Lock()
	s.done = true
	if s.link == nil && s.guard != nil {
		killGroup(s.cmd, true)
	}
	s.mu.Unlock()
	s.guard.stop()
	return err
}

// signal sends SIGTERM to the process group, or SIGKILL when hard, while
// the leader is unreaped. Without a reaper, the tree is recorded before a
// hard kill: once killed, its children are re-parented and no longer
// found. Under a reaper, SIGTERM goes to the command's group (the reaper
// makes the group id the command's pid and reaps it only as it ends) and
// hard tells the reaper to kill the tree.
func (s *stopCore) signal(hard bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.done:
	case s.link == nil:
		if hard {
			s.sample()
		}
		killGroup(s.cmd, hard)
	case hard:
		s.link.kill(s.cmd)
	default:
		s.link.term()
	}
}

// sample records the descendants, if they are recorded.
func (s *stopCore) sample() {
	if s.tree != nil {
		s.tree.sample()
	}
}

// endTree ends the recorded descendants that left the group.
func (s *stopCore) endTree() {
	if s.tree != nil {
		s.tree.end()
	}
}
