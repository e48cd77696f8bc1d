package fsroot

import (
	"context"
	"path"
	"slices"
	"strings"
)

// EventOp says what happened to a path.
type EventOp int

// The three changes a host needs to refresh its views.
const (
	Created EventOp = iota + 1
	Changed
	Removed
)

// String returns "created", "changed" or "removed".
func (op EventOp) String() string {
	switch op {
	case Created:
		return "created"
	case Changed:
		return "changed"
	case Removed:
		return "removed"
	}
	return "unknown"
}

// Event is one change under a root, reported by Watch. Path is absolute and
// symlink-resolved (it starts with Cwd() or one of Grants()).
type Event struct {
	Op   EventOp
	Path string
}

// String reads like "changed /work/a.go".
func (e Event) String() string { return e.Op.String() + " " + e.Path }

// coalescer merges the events of one burst so the host sees the net change
// per path: created+changed is created, created+removed is nothing,
// removed+created is changed.
type coalescer struct {
	pending map[string]EventOp
}

func (c *coalescer) add(p string, op EventOp) {
	if c.pending == nil {
		c.pending = make(map[string]EventOp)
	}
	prev, ok := c.pending[p]
	switch {
	case !ok:
		c.pending[p] = op
	case prev == Created && op == Removed:
		delete(c.pending, p)
	case prev == Created:
		// Still new to the host, whatever happened since.
	case prev == Removed && op == Created:
		c.pending[p] = Changed
	default:
		c.pending[p] = op
	}
}

func (c *coalescer) empty() bool { return len(c.pending) == 0 }

// take returns the pending events in path order and resets.
func (c *coalescer) take() []Event {
	out := make([]Event, 0, len(c.pending))
	for p, op := range c.pending {
		out = append(out, Event{Op: op, Path: p})
	}
	slices.SortFunc(out, func(a, b Event) int { return strings.Compare(a.Path, b.Path) })
	c.pending = nil
	return out
}

// isTempName reports our own atomic-write temporaries, which watchers hide.
func isTempName(p string) bool {
	base := path.Base(p)
	return strings.HasPrefix(base, ".") && strings.Contains(base, ".acphost-") && strings.HasSuffix(base, ".tmp")
}

// underRoots reports whether p lies in one of the resolved roots.
func underRoots(p string, roots []rootDir) bool {
	for _, r := range roots {
		if within(p, r.resolved) {
			return true
		}
	}
	return false
}

// send delivers events unless the watch is over; it reports false when the
// watcher must stop.
func send(ctx context.Context, done <-chan struct{}, out chan<- Event, events []Event) bool {
	for _, ev := range events {
		select {
		case out <- ev:
		case <-ctx.Done():
			return false
		case <-done:
			return false
		}
	}
	return true
}

// deleteWithin removes the keys of m that are p or lie below it.
func deleteWithin[V any](m map[string]V, p string) {
	for k := range m {
		if within(k, p) {
			delete(m, k)
		}
	}
}
