package fsroot

import (
	"context"
	"path"
	"slices"
)

// The grants and the write gate are the part of a root its host keeps in
// step with the session (acphost's bridge sets them from the session's grant
// list and policy); confine and WriteTextFile are where they are checked.

// SetGrants replaces the complete list of granted external directories; an
// empty list removes every grant. Each must be an existing directory. On
// error the previous grants stay in force.
func (c *core) SetGrants(ctx context.Context, dirs []string) error {
	resolved := make([]rootDir, 0, len(dirs))
	for _, d := range dirs {
		rd, err := c.resolveDir(ctx, "grant", d)
		if err != nil {
			return err
		}
		resolved = append(resolved, rd)
	}
	c.mu.Lock()
	c.grants = resolved
	c.notifyGrantsLocked()
	c.mu.Unlock()
	return nil
}

// AddGrant grants one more external directory, which must exist.
func (c *core) AddGrant(ctx context.Context, dir string) error {
	rd, err := c.resolveDir(ctx, "grant", dir)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.grants, rd) {
		c.grants = append(c.grants, rd)
		c.notifyGrantsLocked()
	}
	return nil
}

// RemoveGrant withdraws the grant named by dir (as given or as resolved).
// It takes effect for every operation that starts after it returns.
func (c *core) RemoveGrant(dir string) bool {
	clean := path.Clean(dir)
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.grants)
	c.grants = slices.DeleteFunc(slices.Clone(c.grants), func(g rootDir) bool {
		return g.given == clean || g.resolved == clean
	})
	if len(c.grants) == n {
		return false
	}
	c.notifyGrantsLocked()
	return true
}

// Grants returns the granted directories, symlinks resolved.
func (c *core) Grants() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, len(c.grants))
	for i, g := range c.grants {
		out[i] = g.resolved
	}
	return out
}

func (c *core) notifyGrantsLocked() {
	close(c.grantsChanged)
	c.grantsChanged = make(chan struct{})
}

// roots returns the cwd and grants, plus a channel closed on the next change.
func (c *core) roots() ([]rootDir, <-chan struct{}) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]rootDir{c.cwd}, c.grants...), c.grantsChanged
}

// SetReadOnly turns the write gate on or off. reason (e.g. "Ask mode") is
// quoted in refusals: "write refused: session is read-only (Ask mode)".
func (c *core) SetReadOnly(readOnly bool, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readOnly = readOnly
	c.reason = reason
}
