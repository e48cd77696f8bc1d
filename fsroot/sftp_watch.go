package fsroot

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/pkg/sftp"
)

// Watch polls the cwd and the grants every Options.PollInterval and reports
// Created, Changed and Removed events. SFTP has no change notification, so
// each poll lists directories, at most Options.PollMaxEntries entries; a
// larger tree is covered over several polls, resuming where the last poll
// stopped. Subdirectories are visited in name order, whatever order the
// server lists them in, so which poll reaches a directory does not depend
// on the server's file system. Changes are seen by size, mode and
// modification time, which most servers give in whole seconds. The first
// pass, done before Watch returns, only records the tree. The channel is
// closed when ctx ends or the root closes.
func (s *SFTP) Watch(ctx context.Context) (<-chan Event, error) {
	if s.isClosed() {
		return nil, pathErr("watch", s.cwd.resolved, ErrClosed)
	}
	pw := &pollWatch{
		s:       s,
		out:     make(chan Event, 64),
		listing: make(map[string]map[string]stamp),
		fresh:   make(map[string]bool),
	}
	// The first pass reports nothing: every directory is new to it.
	if _, err := pw.poll(ctx); err != nil {
		return nil, pathErr("watch", s.cwd.resolved, err)
	}
	newTicker := s.pollTicker
	if newTicker == nil {
		newTicker = realTicker
	}
	tick, stop := newTicker(s.opts.PollInterval)
	s.watchers.Add(1)
	go pw.run(ctx, tick, stop)
	return pw.out, nil
}

// stamp is what a poll remembers of a directory entry.
type stamp struct {
	size  int64
	mtime time.Time
	mode  fs.FileMode
}

// pollWatch is one Watch call's state, owned by its run goroutine.
type pollWatch struct {
	s   *SFTP
	out chan Event
	// listing holds each listed directory's entries from its last listing.
	listing map[string]map[string]stamp
	// fresh marks directories that appeared after the first pass, whose
	// entries are all new to the host.
	fresh map[string]bool
	// queue holds the directories still to list in this round.
	queue []string
}

func (pw *pollWatch) run(ctx context.Context, tick <-chan time.Time, stopTick func()) {
	defer pw.s.watchers.Done()
	defer close(pw.out)
	defer stopTick()
	for {
		select {
		case <-ctx.Done():
			return
		case <-pw.s.done:
			return
		case <-tick:
		}
		// A lost connection ends this poll early; the next one retries.
		events, _ := pw.poll(ctx)
		if !send(ctx, pw.s.done, pw.out, events) {
			return
		}
		if pw.s.polled != nil {
			pw.s.polled()
		}
	}
}

// poll lists directories until the entry budget is spent or the round is
// complete, and returns what changed in the directories it listed.
func (pw *pollWatch) poll(ctx context.Context) ([]Event, error) {
	roots, _ := pw.s.roots()
	pw.forgetOutside(roots)
	if len(pw.queue) == 0 {
		for _, r := range roots {
			pw.queue = append(pw.queue, r.resolved)
		}
	}
	budget := pw.s.opts.PollMaxEntries
	var events []Event
	listed := make(map[string]bool)
	for len(pw.queue) > 0 && budget > 0 {
		dir := pw.queue[0]
		pw.queue = pw.queue[1:]
		if listed[dir] || !underRoots(dir, roots) {
			continue // nested grants would list a directory twice
		}
		listed[dir] = true
		var entries []fs.FileInfo
		err := pw.s.do(ctx, func(c *sftp.Client) (err error) {
			entries, err = c.ReadDirContext(ctx, dir)
			return err
		})
		if errors.Is(err, fs.ErrNotExist) {
			delete(pw.listing, dir)
			continue
		}
		if err != nil {
			pw.queue = append([]string{dir}, pw.queue...)
			return events, err
		}
		budget -= len(entries)
		events = append(events, pw.compare(dir, entries)...)
	}
	slices.SortFunc(events, func(a, b Event) int { return strings.Compare(a.Path, b.Path) })
	return events, nil
}

// compare records a directory listing and returns its differences from the
// previous one; a directory listed for the first time reports nothing unless
// it appeared after the first pass.
func (pw *pollWatch) compare(dir string, entries []fs.FileInfo) []Event {
	// Name order, not the server's (ext4 lists by a per-disk hash, tmpfs
	// newest first), so the directories queued below are visited in the
	// same order on every server.
	slices.SortFunc(entries, func(a, b fs.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
	prev, seen := pw.listing[dir]
	report := seen || pw.fresh[dir]
	delete(pw.fresh, dir)
	cur := make(map[string]stamp, len(entries))
	var events []Event
	for _, e := range entries {
		name := e.Name()
		p := path.Join(dir, name)
		if isTempName(p) {
			continue
		}
		st := stamp{size: e.Size(), mtime: e.ModTime(), mode: e.Mode()}
		cur[name] = st
		old, existed := prev[name]
		switch {
		case report && !existed:
			events = append(events, Event{Op: Created, Path: p})
			if e.IsDir() {
				pw.fresh[p] = true
			}
		case report && !e.IsDir() && old != st:
			events = append(events, Event{Op: Changed, Path: p})
		}
		if e.IsDir() {
			pw.queue = append(pw.queue, p)
		}
	}
	for name := range prev {
		if _, ok := cur[name]; !ok {
			p := path.Join(dir, name)
			events = append(events, Event{Op: Removed, Path: p})
			pw.forgetTree(p)
		}
	}
	pw.listing[dir] = cur
	return events
}

func (pw *pollWatch) forgetTree(p string) {
	deleteWithin(pw.listing, p)
	deleteWithin(pw.fresh, p)
}

// forgetOutside drops listings under withdrawn grants.
func (pw *pollWatch) forgetOutside(roots []rootDir) {
	for dir := range pw.listing {
		if !underRoots(dir, roots) {
			delete(pw.listing, dir)
		}
	}
}

// realTicker is the poll ticker outside tests.
func realTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}
