package checkpoint

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// A Watch that runs from one Snapshot to the next lets the second skip its
// walk when the watch saw nothing change in between: the checkpoint before
// a turn, taken when the previous turn's end was recorded and nobody has
// touched a file since, is then a ref, not a git status of the whole tree.
//
// What a watch has seen is only known up to a barrier: an empty file (a
// cookie) made in the Store's own directory, which the same notifications
// follow (one inotify instance, locally and on the host), so its event
// comes after every event of what changed before it was made.

// cookieWait bounds the wait for a cookie's event. A watch whose cookie
// did not come (a file system without notifications) is not asked again:
// the snapshots walk as they would without it.
const cookieWait = 5 * time.Second

// settle is what one Watch has seen of the workspace, for the snapshots.
type settle struct {
	dir string // the cookie directory, on the runner's host

	mu      sync.Mutex
	seen    uint64                   // changes seen in the workspace
	ended   bool                     // the watch stopped, failed, or a cookie never came
	waiting map[string]chan struct{} // cookie name → closed when its event came
	made    int                      // cookies made, which names them
}

// quietMark is where a walk left a watch: the changes it had seen just
// before, and what that walk's checkpoint skipped.
type quietMark struct {
	st      *settle
	seen    uint64
	skipped []Skipped
}

// cookieDir is where a Store's watches make their cookies.
func (s *Store) cookieDir() string { return path.Join(s.opt.Dir, "watch") }

// follow makes st the settle the snapshots ask, unless another watch's
// is.
func (s *Store) follow(st *settle) {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	if s.settle == nil {
		s.settle = st
	}
}

// unfollow ends st: its waiters are let go, and the snapshots no longer
// ask it.
func (s *Store) unfollow(st *settle) {
	st.end()
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	if s.settle == st {
		s.settle = nil
	}
}

// add counts n changes seen.
func (st *settle) add(n int) {
	if n == 0 {
		return
	}
	st.mu.Lock()
	st.seen += uint64(n)
	st.mu.Unlock()
}

// came reports that the events of cookies arrived, after every event
// before them was counted.
func (st *settle) came(cookies []string) {
	if len(cookies) == 0 {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, name := range cookies {
		if ch, ok := st.waiting[name]; ok {
			close(ch)
			delete(st.waiting, name)
		}
	}
}

// end marks the watch as no longer counting and lets its waiters go.
func (st *settle) end() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.ended = true
	for name, ch := range st.waiting {
		close(ch)
		delete(st.waiting, name)
	}
}

// isCookie reports whether p, a path on the runner's host, is one of the
// cookies, and its name.
func (st *settle) isCookie(p string) (string, bool) {
	dir, name := path.Split(p)
	return name, dir == st.dir+"/"
}

// mark makes a cookie and waits for its event: the changes the running
// watch has seen up to now. It reports false when no watch counts (none
// runs, it ended, or the cookie did not come in time).
func (s *Store) mark(ctx context.Context) (quietMark, bool) {
	s.watchMu.Lock()
	st := s.settle
	s.watchMu.Unlock()
	if st == nil {
		return quietMark{}, false
	}
	st.mu.Lock()
	if st.ended {
		st.mu.Unlock()
		return quietMark{}, false
	}
	st.made++
	n := st.made
	name := cookieName(n)
	came := make(chan struct{})
	if st.waiting == nil {
		st.waiting = map[string]chan struct{}{}
	}
	st.waiting[name] = came
	st.mu.Unlock()
	if err := s.makeCookie(ctx, st.dir, n); err != nil {
		st.end()
		return quietMark{}, false
	}
	timer := time.NewTimer(cookieWait)
	defer timer.Stop()
	select {
	case <-came:
	case <-timer.C:
		st.end()
	case <-ctx.Done():
		st.mu.Lock()
		delete(st.waiting, name)
		st.mu.Unlock()
		return quietMark{}, false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ended {
		return quietMark{}, false
	}
	return quietMark{st: st, seen: st.seen}, true
}

// cookieScript makes the cookie $2 in the directory $1, with no process
// of its own (a Shell runs it in its sh); when $3 is set it first removes
// the cookies made before.
const cookieScript = `if [ -n "$3" ]; then rm -f "$1"/c*; fi; : > "$1/$2"`

// cookieSweep is how many cookies an SSH host keeps before they are
// removed, all at once: a removal each time would be a process each time.
const cookieSweep = 64

// cookieName names cookie number n.
func cookieName(n int) string { return "c" + strconv.Itoa(n) }

// makeCookie makes cookie number n in dir: in this process with Local,
// removing the one before; in one command through other runners.
func (s *Store) makeCookie(ctx context.Context, dir string, n int) error {
	name := cookieName(n)
	if _, local := s.opt.Runner.(Local); !local {
		sweep := ""
		if n%cookieSweep == 0 {
			sweep = "1"
		}
		_, err := s.opt.Runner.Run(ctx, []string{"sh", "-c", cookieScript, "sh", dir, name, sweep}, nil, nil)
		return err
	}
	dir = filepath.FromSlash(dir)
	if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
		return err
	}
	_ = os.Remove(filepath.Join(dir, cookieName(n-1)))
	return nil
}

// walkStarts says a snapshot's walk and commit run, which a watch's
// reporter lets go first: its git command would take a core from them
// (see reporter.run). It returns what walkEnds takes.
func (s *Store) walkStarts() chan struct{} {
	ch := make(chan struct{})
	s.watchMu.Lock()
	s.walking = ch
	s.watchMu.Unlock()
	return ch
}

// walkEnds says the walk that walkStarts began is over.
func (s *Store) walkEnds(ch chan struct{}) {
	s.watchMu.Lock()
	if s.walking == ch {
		s.walking = nil
	}
	s.watchMu.Unlock()
	close(ch)
}

// afterWalk waits until no snapshot walks, or ctx is done.
func (s *Store) afterWalk(ctx context.Context) {
	s.watchMu.Lock()
	ch := s.walking
	s.watchMu.Unlock()
	if ch != nil {
		select {
		case <-ch:
		case <-ctx.Done():
		}
	}
}
