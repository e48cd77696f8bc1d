package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// defaultMaxWatchedDirs is Options.MaxWatchedDirs' default.
const defaultMaxWatchedDirs = 8192

// maxWatchBatch bounds the events one report gathers.
const maxWatchBatch = 4096

// maxIgnoreCache bounds the ignore answers a watch remembers.
const maxIgnoreCache = 1 << 16

// Watch reports the workspace's files as they change, until stop is
// called or ctx is done: report gets the files created ("A"), modified
// ("M": content or mode) or removed ("D", also the old name of a rename)
// since its last call, a path at most once a call, line counts 0, in path
// order. What the checkpoints leave out by rule (.git directories, what
// .gitignore and .git/info/exclude ignore) is not reported; directories
// are followed, not reported. Watch returns once the workspace is
// watched; report is called from one goroutine, never after stop
// returns, and last, when the watch ended early, with the error that
// ended it and no files (more directories than Options.MaxWatchedDirs,
// the host's watcher failed or lost events).
//
// Live reports are for following a turn as it runs; the checkpoints are
// the record. A file that changes while its directory is being added may
// be reported as created, and a directory moved within the workspace
// shows its files as created at the new place, not as removed from the
// old one.
//
// A Watch also serves the checkpoints: while one runs (the Store's
// first, if several do), a Snapshot that follows another with nothing
// seen changing in between does not walk the workspace (see Snapshot).
// To know that, the watch follows a directory of the Store's own as well,
// where Snapshot makes an empty file as a barrier.
//
// With Local, Watch uses the operating system's notifications (fsnotify),
// adding directories as they appear. With SSH, it runs inotifywait(1)
// (inotify-tools) on the host over the connection, stopped when stop
// closes its input; a host without it fails with an error wrapping
// exec.ErrNotFound. Other runners, and a negative Options.MaxWatchedDirs,
// fail with an error wrapping errors.ErrUnsupported. Either way the
// checkpoints work as before.
func (s *Store) Watch(ctx context.Context, report func(files []Change, err error)) (stop func(), err error) {
	if s.opt.MaxWatchedDirs < 0 {
		return nil, fmt.Errorf("checkpoint: watching %s: %w: turned off (Options.MaxWatchedDirs)", s.opt.Workspace, errors.ErrUnsupported)
	}
	switch r := s.opt.Runner.(type) {
	case Local:
		return s.watchLocal(ctx, report)
	case SSH:
		return s.watchSSH(ctx, r, report)
	}
	return nil, fmt.Errorf("checkpoint: watching %s: %w: runner %T has no watcher", s.opt.Workspace, errors.ErrUnsupported, s.opt.Runner)
}

// maxWatchedDirs is the cap on watched directories.
func (s *Store) maxWatchedDirs() int {
	if s.opt.MaxWatchedDirs == 0 {
		return defaultMaxWatchedDirs
	}
	return s.opt.MaxWatchedDirs
}

// errTooManyDirs is the error of a watch past its cap.
func (s *Store) errTooManyDirs() error {
	return fmt.Errorf("checkpoint: watching %s: more than %d directories (Options.MaxWatchedDirs)", s.opt.Workspace, s.maxWatchedDirs())
}

// ignoreFilter answers which paths the checkpoints ignore, asking git
// (check-ignore, one command for many paths) only about paths it has not
// seen. A watch's two goroutines share it.
type ignoreFilter struct {
	s       *Store
	mu      sync.Mutex
	ignored map[string]bool
}

// checkIgnoreScript runs check-ignore on the paths of its stdin; exit
// status 1 only says none is ignored. check-ignore refuses the literal
// pathspecs of the Store's environment, and reads its paths as names
// anyway.
const checkIgnoreScript = `unset GIT_LITERAL_PATHSPECS; git "$@" check-ignore --no-index -z --stdin; s=$?; [ "$s" -le 1 ] || exit "$s"`

// ignore reports, of paths (directories with a trailing slash), those
// the checkpoints ignore.
func (f *ignoreFilter) ignore(ctx context.Context, paths []string) (map[string]bool, error) {
	verdict := make(map[string]bool, len(paths))
	var ask []string
	f.mu.Lock()
	for _, p := range paths {
		if ignored, known := f.ignored[p]; known {
			verdict[p] = ignored
		} else {
			ask = append(ask, p)
		}
	}
	f.mu.Unlock()
	if len(ask) == 0 {
		return verdict, nil
	}
	args := append([]string{"sh", "-c", checkIgnoreScript, "sh"}, f.s.gitArgs()[1:]...)
	out, err := f.s.opt.Runner.Run(ctx, args, f.s.env, zList(ask))
	if err != nil {
		return nil, f.s.fail("asking which paths are ignored", err)
	}
	for _, p := range ask {
		verdict[p] = false
	}
	for _, p := range splitZ(out) {
		verdict[p] = true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.ignored)+len(ask) > maxIgnoreCache {
		clear(f.ignored)
	}
	for _, p := range ask {
		f.ignored[p] = verdict[p]
	}
	return verdict, nil
}

// count counts b's changes for the snapshots (settle.go) without asking
// git, so that a Snapshot waits for no git command of the watch's: its
// files not known to be ignored (all of them when a .gitignore changed,
// which makes what the filter knows stale), new directories and
// directories gone.
func (f *ignoreFilter) count(b *batch) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b.rules {
		clear(f.ignored)
	}
	n := len(b.newDirs) + b.dirsGone
	for p := range b.touches {
		if !f.ignored[p] {
			n++
		}
	}
	return n
}

// keep drops the ignored ones of changes.
func (f *ignoreFilter) keep(ctx context.Context, changes []Change) ([]Change, error) {
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.Path
	}
	ignored, err := f.ignore(ctx, paths)
	if err != nil {
		return nil, err
	}
	kept := changes[:0]
	for _, c := range changes {
		if !ignored[c.Path] {
			kept = append(kept, c)
		}
	}
	return kept, nil
}

// reporter is a watch's second goroutine: it lists the files of new
// directories where it must (expand), drops what the checkpoints ignore,
// and reports the rest, batch by batch in order; so the event loop, which
// counts changes and answers cookies (settle.go), never waits for git.
type reporter struct {
	filter *ignoreFilter
	report func([]Change, error)
	expand func(ctx context.Context, dirs []string, files touches) error // nil: the loop did
	queue  chan batch
}

func newReporter(filter *ignoreFilter, report func([]Change, error)) *reporter {
	return &reporter{filter: filter, report: report, queue: make(chan batch, 64)}
}

// send queues b, unless ctx is done first.
func (r *reporter) send(ctx context.Context, b batch) {
	select {
	case r.queue <- b:
	case <-ctx.Done():
	}
}

// fail queues the error that ends the watch, unless the watch was
// stopped.
func (r *reporter) fail(ctx context.Context, err error) {
	if ctx.Err() == nil {
		r.send(ctx, batch{err: err})
	}
}

// run reports the batches until the loop closes the queue; one that
// fails ends the watch (cancel) and is its last report.
func (r *reporter) run(ctx context.Context, cancel func()) {
	ended := false
	for b := range r.queue {
		if ended {
			continue
		}
		err := b.err
		var last error // an error that came while gathering: after b's report
		if err == nil {
			b, last, err = r.gather(ctx, b)
		}
		var files []Change
		if err == nil && r.expand != nil && len(b.newDirs) > 0 {
			err = r.expand(ctx, b.newDirs, b.touches)
		}
		if err == nil && len(b.touches) > 0 {
			files, err = r.filter.keep(ctx, b.touches.list())
		}
		switch {
		case err != nil:
			ended = true
			cancel()
			if b.err != nil || ctx.Err() == nil {
				r.report(nil, err)
			}
		case len(files) > 0:
			r.report(files, nil)
		}
		if last != nil && !ended {
			ended = true
			cancel()
			r.report(nil, last)
		}
	}
}

// gatherWindow is how long the reporter gathers batches before it asks
// git about them: a burst is one git command, and a checkpoint taken
// just after the burst starts its walk first.
const gatherWindow = 50 * time.Millisecond

// gather adds to b the batches that come within gatherWindow, then
// waits while a snapshot walks (the batches are counted already, and
// their report can wait that long). A batch with an error ends the
// gathering; its error is returned as last, to be reported after b.
func (r *reporter) gather(ctx context.Context, b batch) (_ batch, last, err error) {
	timer := time.NewTimer(gatherWindow)
	defer timer.Stop()
	for {
		select {
		case next, ok := <-r.queue:
			if !ok || next.err != nil {
				r.filter.s.afterWalk(ctx)
				return b, next.err, ctx.Err()
			}
			for p, status := range next.touches {
				b.touches.add(p, status)
			}
			b.newDirs = append(b.newDirs, next.newDirs...)
		case <-timer.C:
			r.filter.s.afterWalk(ctx)
			return b, nil, ctx.Err()
		case <-ctx.Done():
			return b, nil, ctx.Err()
		}
	}
}

// batch is what a watch gathered for one report: the files touched, the
// directories that appeared (to watch, and list), how many went away, and
// the cookies that came (settle.go).
type batch struct {
	touches  touches
	newDirs  []string
	dirsGone int // removed or moved away: their files may have no events
	cookies  []string
	rules    bool  // a .gitignore changed: what the filter knows is stale
	err      error // the watch ended with it: the reporter's last report
}

// touches gathers a batch's changes, one per path: a file created and
// then changed stays created, one created and removed is left out, one
// removed and created again is modified.
type touches map[string]string

func (t touches) add(p, status string) {
	if inGitDir(p) {
		return
	}
	switch old := t[p]; {
	case old == "A" && status == "D":
		delete(t, p)
	case old == "A":
	case old == "D" && status == "A":
		t[p] = "M"
	default:
		t[p] = status
	}
}

// list is the batch in path order.
func (t touches) list() []Change {
	list := make([]Change, 0, len(t))
	for p, status := range t {
		list = append(list, Change{Status: status, Path: p})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Path < list[j].Path })
	return list
}

// inGitDir reports whether a workspace path is a .git or in one.
func inGitDir(p string) bool {
	return p == ".git" || strings.HasPrefix(p, ".git/") || strings.HasSuffix(p, "/.git") || strings.Contains(p, "/.git/")
}

// localWatch is a Watch on this machine, its state owned by run.
type localWatch struct {
	s       *Store
	w       *fsnotify.Watcher
	st      *settle
	filter  ignoreFilter
	watched map[string]bool // relative paths of the watched directories
}

func (s *Store) watchLocal(ctx context.Context, report func([]Change, error)) (func(), error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("checkpoint: watching %s: %w", s.opt.Workspace, err)
	}
	lw := &localWatch{s: s, w: w, st: &settle{dir: s.cookieDir()},
		filter: ignoreFilter{s: s, ignored: map[string]bool{}}, watched: map[string]bool{}}
	if err := lw.addTrees(ctx, []string{""}, nil); err != nil {
		w.Close()
		return nil, err
	}
	// The cookies' directory, on the same watcher (settle.go); without it
	// the watch only reports.
	cookies := filepath.FromSlash(lw.st.dir)
	if os.MkdirAll(cookies, 0o700) == nil && w.Add(cookies) == nil {
		s.follow(lw.st)
	}
	ctx, cancel := context.WithCancel(ctx)
	out := newReporter(&lw.filter, report)
	var wg sync.WaitGroup
	wg.Go(func() { out.run(ctx, cancel) })
	wg.Go(func() {
		defer s.unfollow(lw.st)
		defer close(out.queue)
		lw.run(ctx, out)
	})
	return sync.OnceFunc(func() {
		cancel()
		wg.Wait()
	}), nil
}

// run turns the notifications into batches for out until ctx is done or
// the watch fails.
func (lw *localWatch) run(ctx context.Context, out *reporter) {
	defer lw.w.Close()
	for {
		b := batch{touches: touches{}}
		select {
		case <-ctx.Done():
			return
		case err := <-lw.w.Errors:
			out.fail(ctx, fmt.Errorf("checkpoint: watching %s: %w", lw.s.opt.Workspace, err))
			return
		case ev := <-lw.w.Events:
			lw.handle(ev, &b)
		}
		// Take what else is already there, so a burst is one report.
	drain:
		for len(b.touches) < maxWatchBatch {
			select {
			case ev := <-lw.w.Events:
				lw.handle(ev, &b)
			default:
				break drain
			}
		}
		if err := lw.flush(ctx, &b); err != nil {
			out.fail(ctx, err)
			return
		}
		if len(b.touches) > 0 {
			out.send(ctx, b)
		}
	}
}

// handle adds one notification to b.
func (lw *localWatch) handle(ev fsnotify.Event, b *batch) {
	if name, ok := lw.st.isCookie(filepath.ToSlash(ev.Name)); ok {
		if ev.Has(fsnotify.Create) {
			b.cookies = append(b.cookies, name)
		}
		return
	}
	rel, ok := lw.rel(ev.Name)
	if !ok || inGitDir(rel) {
		return
	}
	b.rules = b.rules || path.Base(rel) == ".gitignore"
	switch {
	case ev.Has(fsnotify.Create):
		if info, err := os.Lstat(ev.Name); err == nil && info.IsDir() {
			b.newDirs = append(b.newDirs, rel)
			return
		}
		b.touches.add(rel, "A")
	case ev.Has(fsnotify.Remove), ev.Has(fsnotify.Rename):
		if lw.watched[rel] {
			lw.forget(rel)
			b.dirsGone++
			return
		}
		b.touches.add(rel, "D")
	case ev.Has(fsnotify.Write), ev.Has(fsnotify.Chmod):
		if !lw.watched[rel] {
			b.touches.add(rel, "M")
		}
	}
}

// flush watches the batch's new directories (their files are new too:
// they join the batch), counts what changed, and lets the cookies'
// waiters go, a new directory being watched by then.
func (lw *localWatch) flush(ctx context.Context, b *batch) error {
	if len(b.newDirs) > 0 {
		if err := lw.addTrees(ctx, b.newDirs, b.touches); err != nil {
			return err
		}
	}
	lw.st.add(lw.filter.count(b))
	lw.st.came(b.cookies)
	return nil
}

// addTrees watches dirs and the directories below them that are not
// ignored, level by level (one git command a level), within the cap; with
// files set, the files found are added to it as created.
func (lw *localWatch) addTrees(ctx context.Context, dirs []string, files touches) error {
	level := dirs
	for len(level) > 0 {
		ask := make([]string, 0, len(level))
		for _, d := range level {
			if d != "" {
				ask = append(ask, d+"/")
			}
		}
		ignored, err := lw.filter.ignore(ctx, ask)
		if err != nil {
			return err
		}
		var next []string
		for _, d := range level {
			if d != "" && ignored[d+"/"] || lw.watched[d] {
				continue
			}
			if len(lw.watched) >= lw.s.maxWatchedDirs() {
				return lw.s.errTooManyDirs()
			}
			abs := filepath.Join(lw.s.opt.Workspace, filepath.FromSlash(d))
			if err := lw.w.Add(abs); err != nil {
				if errors.Is(err, os.ErrNotExist) {
					continue // gone already
				}
				return fmt.Errorf("checkpoint: watching %s: %w", abs, err)
			}
			lw.watched[d] = true
			next = append(next, lw.readDir(abs, d, files)...)
		}
		level = next
	}
	return nil
}

// readDir lists the subdirectories of dir (rel in the workspace), .git
// left out, and adds its other entries to files when set.
func (lw *localWatch) readDir(abs, rel string, files touches) []string {
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil // removed meanwhile: its removal is reported
	}
	var dirs []string
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		p := path.Join(rel, e.Name())
		switch {
		case e.IsDir():
			dirs = append(dirs, p)
		case files != nil:
			files.add(p, "A")
		}
	}
	return dirs
}

// forget drops a removed or moved directory and those below it.
func (lw *localWatch) forget(rel string) {
	for d := range lw.watched {
		if d == rel || strings.HasPrefix(d, rel+"/") {
			delete(lw.watched, d)
			_ = lw.w.Remove(filepath.Join(lw.s.opt.Workspace, filepath.FromSlash(d)))
		}
	}
}

// rel is a notified path relative to the workspace.
func (lw *localWatch) rel(name string) (string, bool) {
	r, err := filepath.Rel(lw.s.opt.Workspace, name)
	if err != nil || r == "." || strings.HasPrefix(r, "..") {
		return "", false
	}
	return filepath.ToSlash(r), true
}
