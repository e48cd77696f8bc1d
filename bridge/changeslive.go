package bridge

import (
	"context"
	"sort"
	"strconv"
	"time"

	"github.com/acphost/acphost/checkpoint"
)

// liveInterval is how often a turn's live reports go out at most: a
// flood of writes to one file is one report an interval.
const liveInterval = 250 * time.Millisecond

// maxLiveFiles bounds the files one live report lists.
const maxLiveFiles = 1000

// watchIdle is how long a session's watch outlives its last turn: an
// inotify instance is a per-user resource (128 by default), which an app
// with many idle sessions must not hold. The next turn starts it again;
// its checkpoint before then walks the workspace.
const watchIdle = 10 * time.Minute

// startLive starts the live reports of turn n, unless the app turned them
// off (Options.MaxWatchedDirs < 0). The watch behind them starts with the
// first turn, before its first checkpoint, and runs until the session
// closes: it is what lets a checkpoint skip its walk when nothing changed
// since the last one (see checkpoint.Store.Watch), at a turn's end and
// before the next turn. A watch that cannot start (no
// watcher on the host), or that ended, is said once, in the turn's first
// live report, and tried again at the next turn.
func (c *sessionCheckpoints) startLive(ctx context.Context, n uint64, store *checkpoint.Store) {
	if c.s.cfg.Checkpoints.MaxWatchedDirs < 0 {
		return
	}
	l := &liveChanges{s: c.s, turn: n, pending: map[string]string{}}
	c.mu.Lock()
	c.live = l
	if c.idle != nil {
		c.idle.Stop() // when it fired already, it finds c.live set
		c.idle = nil
	}
	c.mu.Unlock()
	if err := c.startWatch(ctx, store); err != nil {
		l.touched(nil, err)
	}
}

// startWatch starts the session's watch unless it runs. The watch
// outlives ctx, which only bounds its start.
func (c *sessionCheckpoints) startWatch(ctx context.Context, store *checkpoint.Store) error {
	c.mu.Lock()
	old, running := c.stopWatch, c.stopWatch != nil && !c.watchDone
	if !running {
		c.stopWatch, c.watchDone = nil, false
	}
	c.mu.Unlock()
	if running {
		return nil
	}
	if old != nil {
		old() // it ended already; this only waits for its goroutines
	}
	wctx, cancel := context.WithCancel(context.Background())
	unhook := context.AfterFunc(ctx, cancel)
	stop, err := store.Watch(wctx, c.touched)
	if err == nil && !unhook() {
		stop()
		err = ctx.Err()
	}
	if err != nil {
		cancel()
		return err
	}
	c.mu.Lock()
	c.stopWatch = func() { stop(); cancel() }
	c.mu.Unlock()
	return nil
}

// touched is the watch's report: it goes to the running turn's live
// reports; between turns there are none, and the watch only counts for
// the checkpoints. A report can come a little late: one of files changed
// just before a turn's checkpoint may be part of that turn's first.
func (c *sessionCheckpoints) touched(files []checkpoint.Change, err error) {
	c.mu.Lock()
	l := c.live
	if err != nil {
		c.watchDone = true
	}
	c.mu.Unlock()
	if l != nil {
		l.touched(files, err)
	}
}

// endLive ends turn n's live reports: what the watch saw since the last
// report is reported now, before the turn's changes.
func (c *sessionCheckpoints) endLive(n uint64) {
	c.mu.Lock()
	l := c.live
	if l == nil || l.turn != n {
		c.mu.Unlock()
		return
	}
	c.live = nil
	c.idleLocked()
	c.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = true
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.emitLocked()
}

// idleLocked arms the timer that stops the watch of a session left idle;
// c.mu is held.
func (c *sessionCheckpoints) idleLocked() {
	if c.stopWatch != nil && c.idle == nil {
		c.idle = c.s.b.clock.AfterFunc(watchIdle, c.stopIdle)
	}
}

// stopIdle stops the watch of a session whose last turn ended watchIdle
// ago, unless a turn started since.
func (c *sessionCheckpoints) stopIdle() {
	c.mu.Lock()
	if c.live != nil {
		c.mu.Unlock()
		return
	}
	c.idle = nil
	stop := c.stopWatch
	c.stopWatch = nil
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// close stops the watch, when the session closes, once the checkpoint
// prepare started is given up.
func (c *sessionCheckpoints) close() {
	if c.prepared != nil {
		c.cancelPrepare()
		<-c.prepared
	}
	c.mu.Lock()
	stop := c.stopWatch
	c.stopWatch, c.live = nil, nil
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// touched takes the watch's report for the turn: files touched, or why
// the watch stopped.
func (l *liveChanges) touched(files []checkpoint.Change, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	if err != nil {
		l.stopped = "live reports stopped, the turn's changes event lists every file: " + err.Error()
	}
	for _, f := range files {
		l.merge(f.Path, f.Status)
	}
	if l.timer == nil && (len(l.pending) > 0 || l.more > 0 || l.stopped != "") {
		l.timer = l.s.b.clock.AfterFunc(liveInterval, l.flush)
	}
}

// merge adds one touch to those pending: a file made in the interval
// stays made, one made and removed in it is not reported, one removed
// and made again is modified.
func (l *liveChanges) merge(p, status string) {
	old, seen := l.pending[p]
	switch {
	case !seen && len(l.pending) >= maxLiveFiles:
		l.more++
	case !seen:
		l.pending[p] = status
	case old == "A" && status == "D":
		delete(l.pending, p)
	case old == "A":
	case old == "D" && status == "A":
		l.pending[p] = "M"
	default:
		l.pending[p] = status
	}
}

// flush is the timer's: it reports what is pending.
func (l *liveChanges) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timer = nil
	if !l.ended {
		l.emitLocked()
	}
}

// emitLocked reports what is pending, if anything; l.mu is held, so the
// reports go out in order.
func (l *liveChanges) emitLocked() {
	if len(l.pending) == 0 && l.more == 0 && l.stopped == "" {
		return
	}
	ch := &Changes{Op: "touch"}
	for p, status := range l.pending {
		ch.Files = append(ch.Files, checkpoint.Change{Status: status, Path: p})
	}
	sort.Slice(ch.Files, func(i, j int) bool { return ch.Files[i].Path < ch.Files[j].Path })
	if l.more > 0 {
		ch.Skipped = append(ch.Skipped, checkpoint.Skipped{Path: ".", Reason: strconv.Itoa(l.more) + " more files touched, listed by the turn's changes event"})
	}
	if l.stopped != "" {
		ch.Skipped = append(ch.Skipped, checkpoint.Skipped{Path: ".", Reason: l.stopped})
	}
	clear(l.pending)
	l.more, l.stopped = 0, ""
	l.s.emit(Event{Kind: KindChanges, Turn: l.turn, Changes: ch})
}
