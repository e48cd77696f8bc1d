package bridge

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/acphost/acphost/checkpoint"
)

// endCheckpointTimeout bounds the checkpoint at a turn's end.
const endCheckpointTimeout = 10 * time.Minute

// maxWriteText bounds the texts a write's changes event carries.
const maxWriteText = 256 << 10

// enabled reports whether the app asked for checkpoints.
func (c *sessionCheckpoints) enabled() bool { return c.s.cfg.Checkpoints != nil }

// open returns the session's Store, opening it the first time: the
// workspace is the session's cwd, git runs where the agent runs.
func (c *sessionCheckpoints) open(ctx context.Context) (*checkpoint.Store, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.store != nil {
		return c.store, nil
	}
	s := c.s
	opt := *s.cfg.Checkpoints
	c.forkOwn(&opt)
	if opt.Workspace == "" {
		opt.Workspace = s.cfg.Cwd
	}
	if opt.Name == "" {
		opt.Name = s.key
	}
	if opt.Runner == nil {
		opt.Runner = s.b.hostRunner()
	}
	store, err := checkpoint.Open(ctx, opt)
	if err != nil {
		return nil, err
	}
	c.store = store
	return store, nil
}

// prepareCheckpoint names the checkpoint prepare records: the workspace
// as the session opened, before any turn.
const prepareCheckpoint = "open"

// prepare records the workspace of a new session while its agent starts,
// on a goroutine of its own: it opens the Store, starts the watch and
// walks the workspace once. The checkpoint before the first turn then
// finds nothing changed since and skips its walk, which was most of the
// time between a first prompt and its sending, while agents take 0.1 to
// 2 s to answer session/new (BenchmarkFirstPrompt: 1,000 files and a 200
// ms session/new, 0.57-0.67x the time from Prompt to turn_start of a
// session whose checkpoint walks at the prompt). It is for sessions
// whose workspace is known before the agent starts: not one resumed from
// a record, a fork, or one moved into a worktree. A failure is not
// reported here: the first turn's checkpoint tries again and reports its
// own. Without a watch the walk would not be reused, so there is none.
func (c *sessionCheckpoints) prepare() {
	cfg := c.s.cfg
	if !c.enabled() || cfg.Checkpoints.MaxWatchedDirs < 0 || cfg.Cwd == "" || cfg.Worktree != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.prepared, c.cancelPrepare = make(chan struct{}), cancel
	go func() {
		defer close(c.prepared)
		defer cancel()
		store, err := c.open(ctx)
		if err != nil || c.startWatch(ctx, store) != nil {
			return
		}
		_, _ = store.Snapshot(ctx, prepareCheckpoint)
		c.mu.Lock()
		c.idleLocked() // no turn runs: a turn's checkpoint waits for this one
		c.mu.Unlock()
	}()
}

// waitPrepared waits for the checkpoint prepare started, if any; when
// ctx ends first, it gives that checkpoint up, as a prompt's cancel gives
// up the walk of the checkpoint before its turn.
func (c *sessionCheckpoints) waitPrepared(ctx context.Context) {
	if c.prepared == nil {
		return
	}
	select {
	case <-c.prepared:
	case <-ctx.Done():
		c.cancelPrepare()
		<-c.prepared
	}
}

// beginTurn records the workspace before turn n; a failure is reported
// and the turn runs without.
func (c *sessionCheckpoints) beginTurn(ctx context.Context, n uint64) {
	if !c.enabled() {
		return
	}
	c.waitPrepared(ctx)
	store, err := c.open(ctx)
	var cp checkpoint.Checkpoint
	if err == nil {
		// The watch first: a walk it sees marks the workspace as recorded,
		// so the checkpoint at the turn's end, or before the next turn,
		// skips its walk when nothing changed since.
		c.startLive(ctx, n, store)
		cp, err = store.Snapshot(ctx, turnCheckpoint(n, "before"))
	}
	if err != nil {
		c.s.emit(Event{Kind: KindError, Turn: n, Err: fmt.Errorf("bridge: session %s: checkpoint before turn %d: %w", c.s.key, n, err)})
		return
	}
	c.mu.Lock()
	if c.before == nil {
		c.before = map[uint64]string{}
	}
	c.before[n] = cp.ID
	c.mu.Unlock()
}

// endTurn records the workspace at the end of turn n and reports what the
// turn changed. It runs with the turn lock held, after turn_end, so the
// next turn's checkpoint comes after it.
func (c *sessionCheckpoints) endTurn(n uint64) {
	c.endLive(n)
	c.mu.Lock()
	before, ok := c.before[n]
	delete(c.before, n)
	store := c.store
	c.mu.Unlock()
	if !ok {
		return // checkpoints are off, or the one before the turn failed and was reported
	}
	// The turn lock is held: a host whose git hangs (a dead SSH link)
	// must not hold the session for ever.
	ctx, cancel := context.WithTimeout(context.Background(), endCheckpointTimeout)
	defer cancel()
	cp, err := store.Snapshot(ctx, turnCheckpoint(n, "end"))
	var files []checkpoint.Change
	if err == nil {
		files, err = store.Changes(ctx, before, cp.ID)
	}
	if err != nil {
		c.s.emit(Event{Kind: KindError, Turn: n, Err: fmt.Errorf("bridge: session %s: checkpoint at the end of turn %d: %w", c.s.key, n, err)})
		return
	}
	c.s.emit(Event{Kind: KindChanges, Turn: n, Changes: &Changes{Op: "turn", From: before, To: cp.ID, Files: files, Skipped: cp.Skipped}})
}

// turnCheckpoint names the checkpoint before or at the end of turn n.
func turnCheckpoint(n uint64, which string) string {
	return "turn-" + strconv.FormatUint(n, 10) + "-" + which
}

// writeBefore is what an fs/write_text_file replaces, for its changes
// event.
type writeBefore struct {
	report  bool // checkpoints are on: the write is reported
	text    string
	known   bool // text was read (or the file is new)
	created bool
}

// beforeWrite reads what fs/write_text_file is about to replace.
func (c *sessionCheckpoints) beforeWrite(ctx context.Context, p string) writeBefore {
	if !c.enabled() {
		return writeBefore{}
	}
	old, err := c.s.cfg.Files.ReadTextFile(ctx, p, 0, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return writeBefore{report: true, known: true, created: true}
	}
	return writeBefore{report: true, text: old, known: err == nil}
}

// wrote reports an fs/write_text_file that was done.
func (c *sessionCheckpoints) wrote(p, content string, before writeBefore) {
	if !before.report {
		return
	}
	ch := &Changes{Op: "write", Path: p, Created: before.created}
	if before.known && len(before.text) <= maxWriteText && len(content) <= maxWriteText {
		ch.OldText, ch.NewText = before.text, content
	}
	c.s.emit(Event{Kind: KindChanges, Changes: ch})
}

// TurnDiff returns the unified diff of what the numbered turn changed in
// the workspace (all of it, or the files paths name, relative to the
// session's cwd or absolute in it), from the checkpoints around the turn;
// they outlive the app. It needs SessionConfig.Checkpoints.
func (s *Session) TurnDiff(ctx context.Context, turn uint64, paths ...string) (string, error) {
	store, err := s.ckpt.storeFor(ctx, "diff")
	if err != nil {
		return "", err
	}
	rel, err := s.ckpt.relPaths(paths)
	if err != nil {
		return "", err
	}
	diff, err := store.Diff(ctx, turnCheckpoint(turn, "before"), turnCheckpoint(turn, "end"), rel...)
	if err != nil {
		return "", fmt.Errorf("bridge: session %s: diff of turn %d: %w", s.key, turn, err)
	}
	return diff, nil
}

// Restore brings the workspace back to its state before the numbered
// turn (Event.Turn): every
// file that differs between that checkpoint and the last one (the end of
// the last turn) is set back, after the workspace is recorded so the
// restore can be undone (Changes.From of its event). A file changed since
// the last turn ended (by the user, a command still running) is a
// conflict: the error is a *checkpoint.ConflictError naming the files and
// nothing changes, unless force. It is refused with ErrBusy while a turn
// runs, and no turn starts until it is done. A changes event (Op
// "restore") reports it, and so the journal keeps it.
func (s *Session) Restore(ctx context.Context, turn uint64, force bool) error {
	return s.ckpt.restore(ctx, turn, "", "", force)
}

// RevertFile is Restore for one file (relative to the session's cwd, or
// absolute in it): it is set back to its state before the numbered turn.
func (s *Session) RevertFile(ctx context.Context, turn uint64, path string, force bool) error {
	if path == "" {
		return errors.New("bridge: revert: no path")
	}
	return s.ckpt.restore(ctx, turn, "", path, force)
}

// restore sets the workspace (or only file) back to checkpoint id, or
// when id is "" to the state before the numbered turn.
func (c *sessionCheckpoints) restore(ctx context.Context, turn uint64, id, file string, force bool) error {
	s := c.s
	store, err := c.storeFor(ctx, "restore")
	if err != nil {
		return err
	}
	if err := s.turns.claimTurn(ctx); err != nil {
		return fmt.Errorf("bridge: session %s: restore: %w", s.key, err)
	}
	defer s.turns.releaseTurn()
	// The previous turn's end checkpoint is taken under the turn lock.
	if err := s.turns.mu.LockCtx(ctx); err != nil {
		return err
	}
	defer s.turns.mu.Unlock()
	to, what := id, "checkpoint "+id
	if id == "" {
		to, what = turnCheckpoint(turn, "before"), fmt.Sprintf("the state before turn %d", turn)
	}
	var cp checkpoint.Checkpoint
	if file == "" {
		cp, err = store.Restore(ctx, to, force)
	} else {
		var rel []string
		if rel, err = c.relPaths([]string{file}); err == nil {
			cp, err = store.RevertFile(ctx, rel[0], to, force)
		}
	}
	if err != nil {
		return fmt.Errorf("bridge: session %s: restoring %s: %w", s.key, what, err)
	}
	files, err := store.Changes(ctx, cp.Undo, cp.ID)
	if err != nil {
		return fmt.Errorf("bridge: session %s: restore done, listing what it changed: %w", s.key, err)
	}
	s.emit(Event{Kind: KindChanges, Changes: &Changes{Op: "restore", Restored: turn, From: cp.Undo, To: cp.ID, Files: files}})
	return nil
}

// storeFor is the session's Store for an app's call, opened if need be.
func (c *sessionCheckpoints) storeFor(ctx context.Context, what string) (*checkpoint.Store, error) {
	s := c.s
	if err := s.closedErr(); err != nil {
		return nil, err
	}
	if !c.enabled() {
		return nil, fmt.Errorf("bridge: session %s: %s: checkpoints are off (SessionConfig.Checkpoints)", s.key, what)
	}
	store, err := c.open(ctx)
	if err != nil {
		return nil, fmt.Errorf("bridge: session %s: %s: %w", s.key, what, err)
	}
	return store, nil
}

// relPaths makes paths relative to the workspace, refusing those outside.
func (c *sessionCheckpoints) relPaths(paths []string) ([]string, error) {
	ws := c.s.cfg.Checkpoints.Workspace
	if ws == "" {
		ws = c.s.cfg.Cwd
	}
	ws = path.Clean(ws)
	rel := make([]string, len(paths))
	for i, p := range paths {
		if !path.IsAbs(p) {
			rel[i] = path.Clean(p)
			continue
		}
		r, ok := strings.CutPrefix(path.Clean(p), ws+"/")
		if !ok {
			return nil, fmt.Errorf("bridge: %s is outside the workspace %s", p, ws)
		}
		rel[i] = r
	}
	return rel, nil
}
