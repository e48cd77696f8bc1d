package bridge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/acphost/acphost/acpclient"
)

// This file is the end of a session's life and the lists of sessions: what
// an app needs to show, close and delete the sessions of a long-lived Host.

// Errors of the session lifecycle.
var (
	// ErrSessionOpen: a session with this key is already open in the Host.
	ErrSessionOpen = errors.New("bridge: a session with this key is already open")
	// ErrUnknownSession: no open session and no record has this key.
	ErrUnknownSession = errors.New("bridge: unknown session")
)

// closeWaitPoll is how often Close checks that a cancelled turn has ended.
const closeWaitPoll = 5 * time.Millisecond

// Close ends the session: a running turn is cancelled and waited for (for
// as long as ctx allows; if ctx ends first Close returns its error and the
// session, which refuses new calls already, can be closed again), the agent
// is sent session/close where it supports it, the requests still waiting
// on the user are abandoned, and the session leaves its bridge, which then
// holds nothing of it. Every later call on the session fails with
// ErrSessionClosed. A session_closed event is emitted. Its record stays in
// the journal (or Store), so OpenSession with its Key resumes it. Closing
// a closed session does nothing.
func (s *Session) Close(ctx context.Context) error { return s.close(ctx, true) }

// close is Close; announce says whether to emit session_closed (a closing
// bridge's exited event already says its sessions ended).
func (s *Session) close(ctx context.Context, announce bool) error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	s.mu.Unlock()
	// A bridge shutting down keeps the queue in the record; Close drops it.
	s.queue.close(announce)
	s.auth.stopAuthority() // no agent mode is moved once closing is set
	// Its commands first: an agent waiting on one (wait_for_exit) can then
	// end its turn. No new one starts once closing is set.
	s.b.terminals.End(ofSession(s))
	if err := s.turns.endTurn(ctx); err != nil {
		return fmt.Errorf("bridge %s: closing session %s: waiting for its turn to end: %w", s.b.cfg.ID, s.key, err)
	}
	defer s.turns.mu.Unlock()
	s.queue.wait() // its turn has ended and it runs no other
	s.ckpt.close()
	s.native.mu.Lock()
	conn := s.native.conn
	s.native.conn = nil
	s.native.mu.Unlock()
	var err error
	if conn != nil && conn == s.b.liveConn() && conn.Agent().AgentCapabilities.SessionCapabilities.Close != nil {
		if cerr := conn.CloseSession(ctx, s.id); cerr != nil {
			err = fmt.Errorf("bridge %s: closing session %s: %w", s.b.cfg.ID, s.key, cerr)
		}
	}
	s.pending.abandonAll(ErrSessionClosed)
	s.b.forget(s)
	s.rec.save() // the last record: closed sessions are resumed from it
	s.files.closeOwnFiles()
	s.mu.Lock()
	s.closed = true
	s.tools = newToolTracker(s.b.provider)
	s.configOptions, s.models = nil, nil
	s.mu.Unlock()
	if announce {
		s.emit(Event{Kind: KindSessionClosed})
	}
	return err
}

// endTurn takes the turn lock, cancelling the running turn (and any that
// got in before Close was noticed) until it has ended or ctx ends.
func (tr *sessionTurns) endTurn(ctx context.Context) error {
	s := tr.s
	var cancelled *turnState
	for !tr.mu.TryLock() {
		s.mu.Lock()
		turn := s.turn
		s.mu.Unlock()
		if turn != nil && turn != cancelled {
			tr.cancelTurn(turn)
			cancelled = turn
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(closeWaitPoll):
		}
	}
	return nil
}

// Delete closes the session, deletes it on the agent where the agent
// supports session/delete, and removes its record (and its events) from the
// journal and its Store. A native session the agent no longer knows is not
// an error.
func (s *Session) Delete(ctx context.Context) error {
	if err := s.Close(ctx); err != nil {
		return err
	}
	if err := s.b.deleteOnAgent(ctx, s.id); err != nil {
		return fmt.Errorf("bridge %s: deleting session %s: %w", s.b.cfg.ID, s.key, err)
	}
	if err := removeWorktree(ctx, s.b.hostRunner(), s.worktree); err != nil {
		return fmt.Errorf("bridge %s: deleting session %s: %w", s.b.cfg.ID, s.key, err)
	}
	if err := s.b.host.deleteRecord(ctx, s.key); err != nil {
		return err
	}
	if s.cfg.Store != nil {
		if err := s.cfg.Store.Delete(s.key); err != nil {
			return fmt.Errorf("bridge %s: deleting the stored record of session %s: %w", s.b.cfg.ID, s.key, err)
		}
	}
	return nil
}

// deleteOnAgent sends session/delete for a native id when the agent runs
// and supports it.
func (b *Bridge) deleteOnAgent(ctx context.Context, nativeID string) error {
	conn := b.liveConn()
	if conn == nil || nativeID == "" || conn.Agent().AgentCapabilities.SessionCapabilities.Delete == nil {
		return nil
	}
	err := conn.DeleteSession(ctx, nativeID)
	if e := errorsAsCall(err); e != nil && e.Code == acpclient.CodeResourceNotFound {
		return nil // already gone
	}
	return err
}

// DeleteSession deletes the session with the given key: an open one as
// Session.Delete does; one that is not open from the journal, and from its
// agent when that agent's bridge runs and supports session/delete.
func (h *Host) DeleteSession(ctx context.Context, key string) error {
	if s := h.openSession(key); s != nil {
		return s.Delete(ctx)
	}
	if h.journal == nil {
		return fmt.Errorf("bridge: deleting session %s: %w", key, ErrUnknownSession)
	}
	rec, ok, err := h.journal.LoadSession(ctx, key)
	if err != nil {
		return fmt.Errorf("bridge: deleting session %s: reading the journal: %w", key, err)
	}
	if !ok {
		return fmt.Errorf("bridge: deleting session %s: %w", key, ErrUnknownSession)
	}
	h.mu.Lock()
	b := h.all[rec.Bridge]
	h.mu.Unlock()
	if b != nil {
		if err := b.deleteOnAgent(ctx, rec.NativeSessionID); err != nil {
			return fmt.Errorf("bridge %s: deleting session %s: %w", b.cfg.ID, key, err)
		}
		if err := removeWorktree(ctx, b.hostRunner(), rec.Worktree); err != nil {
			return fmt.Errorf("bridge %s: deleting session %s: %w", b.cfg.ID, key, err)
		}
	} else if rec.Worktree != nil {
		return fmt.Errorf("bridge: deleting session %s: its worktree %s is on the host of bridge %s, which is not running: start it, then delete the session", key, rec.Worktree.Dir, rec.Bridge)
	}
	return h.deleteRecord(ctx, key)
}

func (h *Host) deleteRecord(ctx context.Context, key string) error {
	if h.journal == nil {
		return nil
	}
	if err := h.journal.DeleteSession(ctx, key); err != nil {
		return fmt.Errorf("bridge: deleting session %s from the journal: %w", key, err)
	}
	return nil
}

// SessionEntry is one session in a list (Bridge.ListSessions,
// Host.Sessions), merged from what the bridge has open, what the journal
// recorded and what the agent lists. Key is empty for a session only the
// agent knows; it cannot be opened by key, but by its NativeID as
// SessionConfig.ResumeID.
type SessionEntry struct {
	Key      string
	Bridge   string
	NativeID string
	Cwd      string
	Title    string
	// UpdatedAt is the latest update time any source reports.
	UpdatedAt time.Time
	// Open: the session is open in this Host (Session is it). Journaled:
	// the journal holds its record (Record is it). AgentListed: the
	// agent's session/list includes it.
	Open        bool
	Journaled   bool
	AgentListed bool
	Session     *Session
	Record      *Record
	// Fork links a forked session to its parent, so a list can be drawn
	// as a tree (see Session.Fork).
	Fork *ForkOrigin
}

// ListSessions lists the sessions of this bridge: those open in it, those
// the Host's journal recorded for it, and those its agent lists with
// session/list (every page) when the agent runs and supports it, merged by
// key and native id (any id the key had), most recently updated first.
// Listing does not start a stopped agent.
func (b *Bridge) ListSessions(ctx context.Context) ([]SessionEntry, error) {
	l := newSessionList()
	for _, s := range b.openSessions() {
		l.addOpen(s)
	}
	if err := l.addJournal(ctx, b.host.journal, b.cfg.ID); err != nil {
		return nil, err
	}
	listed, err := b.agentSessions(ctx)
	if err != nil {
		return nil, err
	}
	for _, info := range listed {
		l.addAgent(b.cfg.ID, info)
	}
	return l.sorted(), nil
}

// Sessions lists the sessions of every bridge: the open ones, those the
// journal recorded, including sessions of agents that are not running, and
// those each running agent lists with session/list (every page) where it
// supports it, merged as Bridge.ListSessions merges them, most recently
// updated first. Listing does not start a stopped agent. An agent whose
// list fails does not hide the others: Sessions returns every entry it
// could gather together with an error naming each agent that failed. The
// list is nil only when the journal could not be read.
func (h *Host) Sessions(ctx context.Context) ([]SessionEntry, error) {
	l := newSessionList()
	bridges := h.allBridges()
	for _, b := range bridges {
		for _, s := range b.openSessions() {
			l.addOpen(s)
		}
	}
	if err := l.addJournal(ctx, h.journal, ""); err != nil {
		return nil, err
	}
	var failed []error
	for _, b := range bridges {
		listed, err := b.agentSessions(ctx)
		if err != nil {
			failed = append(failed, err)
		}
		for _, info := range listed {
			l.addAgent(b.cfg.ID, info)
		}
	}
	return l.sorted(), errors.Join(failed...)
}

// agentSessions returns every page of the agent's session/list.
func (b *Bridge) agentSessions(ctx context.Context) ([]acpclient.SessionInfo, error) {
	conn := b.liveConn()
	if conn == nil || conn.Agent().AgentCapabilities.SessionCapabilities.List == nil {
		return nil, nil
	}
	var out []acpclient.SessionInfo
	seen := map[string]bool{}
	for cursor := ""; ; {
		resp, err := conn.ListSessions(ctx, &acpclient.ListSessionsRequest{Cursor: cursor})
		if err != nil {
			return nil, fmt.Errorf("bridge %s: %w", b.cfg.ID, err)
		}
		out = append(out, resp.Sessions...)
		if resp.NextCursor == "" || seen[resp.NextCursor] {
			return out, nil // a repeated cursor would loop forever
		}
		seen[resp.NextCursor] = true
		cursor = resp.NextCursor
	}
}

// sessionList merges session entries from several sources.
type sessionList struct {
	entries  []*SessionEntry
	byKey    map[string]*SessionEntry
	byNative map[nativeRef]*SessionEntry // every native id an entry had
}

// nativeRef names a native session: ids are the agent's own, so two agents
// may hand out the same one.
type nativeRef struct{ bridge, id string }

func newSessionList() *sessionList {
	return &sessionList{byKey: map[string]*SessionEntry{}, byNative: map[nativeRef]*SessionEntry{}}
}

func (l *sessionList) add(e *SessionEntry, natives []NativeSession) {
	l.entries = append(l.entries, e)
	if e.Key != "" {
		l.byKey[e.Key] = e
	}
	l.byNative[nativeRef{e.Bridge, e.NativeID}] = e
	for _, n := range natives {
		l.byNative[nativeRef{e.Bridge, n.ID}] = e
	}
}

func (l *sessionList) addOpen(s *Session) {
	l.add(s.listEntry())
}

// addJournal merges the journal's records (of one bridge, or all for "").
func (l *sessionList) addJournal(ctx context.Context, j Journal, bridge string) error {
	if j == nil {
		return nil
	}
	recs, err := j.Sessions(ctx)
	if err != nil {
		return fmt.Errorf("bridge: listing the journal's sessions: %w", err)
	}
	for i := range recs {
		rec := &recs[i]
		if bridge != "" && rec.Bridge != bridge {
			continue
		}
		e := l.byKey[rec.Key]
		if e == nil {
			e = &SessionEntry{Key: rec.Key, Bridge: rec.Bridge, NativeID: rec.NativeSessionID, Cwd: rec.Cwd, Title: rec.Title}
			l.add(e, rec.NativeHistory)
		}
		e.Journaled, e.Record = true, rec
		e.Fork = cmp.Or(e.Fork, rec.Fork)
		e.Title = cmp.Or(e.Title, rec.Title)
		if rec.UpdatedAt.After(e.UpdatedAt) {
			e.UpdatedAt = rec.UpdatedAt
		}
	}
	return nil
}

func (l *sessionList) addAgent(bridge string, info acpclient.SessionInfo) {
	e := l.byNative[nativeRef{bridge, info.SessionID}]
	if e == nil {
		e = &SessionEntry{Bridge: bridge, NativeID: info.SessionID, Cwd: info.Cwd}
		l.add(e, nil)
	}
	e.AgentListed = true
	e.Title = cmp.Or(info.Title, e.Title) // the agent's own title is the freshest
	if t, err := time.Parse(time.RFC3339, info.UpdatedAt); err == nil && t.After(e.UpdatedAt) {
		e.UpdatedAt = t
	}
}

func (l *sessionList) sorted() []SessionEntry {
	out := make([]SessionEntry, len(l.entries))
	for i, e := range l.entries {
		out[i] = *e
	}
	slices.SortStableFunc(out, func(a, b SessionEntry) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.NativeID, b.NativeID))
	})
	return out
}

// reserveKey makes s the open session of its key in b, unless a session of
// that key is open in any bridge of the Host. Bridge locks are taken under
// the Host's, never the other way round.
func (h *Host) reserveKey(b *Bridge, s *Session) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, other := range h.all {
		if other.openByKey(s.key) != nil {
			return fmt.Errorf("bridge %s: opening session %s: %w", b.cfg.ID, s.key, ErrSessionOpen)
		}
	}
	b.addOpen(s)
	return nil
}

// addOpen makes s the bridge's open session of its key.
func (b *Bridge) addOpen(s *Session) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.open[s.key] = s
}

// listEntry is the session's entry in the session list, with its native
// ids: it takes the session's own locks, so it is the session's method.
func (s *Session) listEntry() (*SessionEntry, []NativeSession) {
	updated := s.rec.updatedAt()
	s.mu.Lock()
	title, natives := s.title, slices.Clone(s.natives)
	s.mu.Unlock()
	return &SessionEntry{Key: s.key, Bridge: s.b.cfg.ID, NativeID: s.ID(), Cwd: s.cfg.Cwd, Title: title,
		UpdatedAt: updated, Open: true, Session: s, Fork: s.origin()}, natives
}

// Session returns the open session with the given host key or agent
// session id, current or past (a session whose restarted agent could not
// resume it is still found by the id it had), or nil.
func (b *Bridge) Session(id string) *Session {
	if s := b.session(id); s != nil {
		return s
	}
	for _, s := range b.openSessions() {
		if s.key == id || s.hadNative(id) {
			return s
		}
	}
	return nil
}
