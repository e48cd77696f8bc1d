package fsroot

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch reports Created, Changed and Removed events under the cwd and the
// grants, following new subdirectories and grant changes. Events of one
// burst are gathered for Options.Debounce and merged per path. The channel
// is closed when ctx ends or the root closes.
func (l *Local) Watch(ctx context.Context) (<-chan Event, error) {
	if l.isClosed() {
		return nil, pathErr("watch", l.cwd.resolved, ErrClosed)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, pathErr("watch", l.cwd.resolved, err)
	}
	lw := &localWatch{
		l:       l,
		w:       w,
		out:     make(chan Event, 64),
		known:   make(map[string]bool),
		watched: make(map[string]bool),
	}
	roots, changed := l.roots()
	lw.roots = roots
	for _, r := range roots {
		lw.addTree(r.resolved, false)
	}
	l.watchers.Add(1)
	go lw.run(ctx, changed)
	return lw.out, nil
}

// localWatch is one Watch call's state, owned by its run goroutine.
type localWatch struct {
	l     *Local
	w     *fsnotify.Watcher
	out   chan Event
	roots []rootDir
	// known holds the files and directories seen so far, so a rename over an
	// existing file (our own atomic write) reads as Changed, not Created.
	known   map[string]bool
	watched map[string]bool
	burst   coalescer
}

func (lw *localWatch) run(ctx context.Context, grantsChanged <-chan struct{}) {
	defer lw.l.watchers.Done()
	defer close(lw.out)
	defer lw.w.Close()
	var timer *time.Timer
	var timerC <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-lw.l.done:
			return
		case <-grantsChanged:
			lw.roots, grantsChanged = lw.l.roots()
			lw.syncRoots()
		case ev, ok := <-lw.w.Events:
			if !ok {
				return
			}
			lw.handle(ev)
			if timerC == nil && !lw.burst.empty() {
				timer = time.NewTimer(lw.l.opts.Debounce)
				timerC = timer.C
			}
		case _, ok := <-lw.w.Errors:
			// An overflow loses events; there is nothing to report per path,
			// and the watch keeps going for what comes next.
			if !ok {
				return
			}
		case <-timerC:
			timer, timerC = nil, nil
			if !send(ctx, lw.l.done, lw.out, lw.burst.take()) {
				return
			}
		}
	}
}

func (lw *localWatch) handle(ev fsnotify.Event) {
	p := filepath.Clean(ev.Name)
	if isTempName(p) || !underRoots(p, lw.roots) {
		return
	}
	switch {
	case ev.Has(fsnotify.Create):
		op := Created
		if lw.known[p] {
			op = Changed
		}
		lw.known[p] = true
		lw.burst.add(p, op)
		// A new directory: watch it and report what was made in it before
		// the watch was in place.
		lw.addTree(p, true)
	case ev.Has(fsnotify.Remove), ev.Has(fsnotify.Rename):
		lw.forget(p)
		lw.burst.add(p, Removed)
	case ev.Has(fsnotify.Write):
		lw.known[p] = true
		lw.burst.add(p, Changed)
	}
}

// addTree watches dir and every directory below it; with report set, the
// entries found are reported as Created. A non-directory is ignored.
func (lw *localWatch) addTree(dir string, report bool) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil
		}
		if p != dir {
			if report && !lw.known[p] && !isTempName(p) {
				lw.burst.add(p, Created)
			}
			lw.known[p] = true
		}
		if d.IsDir() && !lw.watched[p] {
			if err := lw.w.Add(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			lw.watched[p] = true
		}
		return nil
	})
}

// forget drops a removed path and everything known below it.
func (lw *localWatch) forget(p string) {
	deleteWithin(lw.known, p)
	deleteWithin(lw.watched, p)
}

// syncRoots follows a grant change: new roots are watched, directories no
// longer under any root are dropped.
func (lw *localWatch) syncRoots() {
	for dir := range lw.watched {
		if !underRoots(dir, lw.roots) {
			_ = lw.w.Remove(dir)
			delete(lw.watched, dir)
		}
	}
	for k := range lw.known {
		if !underRoots(k, lw.roots) {
			delete(lw.known, k)
		}
	}
	for _, r := range lw.roots {
		if !lw.watched[r.resolved] {
			lw.addTree(r.resolved, false)
		}
	}
}
