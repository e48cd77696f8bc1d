package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/acphost/acphost/bridge"
)

// sessionItem is a session as the page lists it.
type sessionItem struct {
	Key       string        `json:"key"`
	Agent     string        `json:"agent"`
	NativeID  string        `json:"nativeId,omitempty"`
	Cwd       string        `json:"cwd,omitempty"`
	Title     string        `json:"title,omitempty"`
	UpdatedAt time.Time     `json:"updatedAt,omitzero"`
	Open      bool          `json:"open"`
	Busy      bool          `json:"busy"`
	Turns     uint64        `json:"turns,omitempty"`
	Policy    bridge.Policy `json:"policy"`
	AgentMode string        `json:"agentMode,omitempty"`
	// Known: the session's agent is one this server runs, so it can be
	// opened again.
	Known bool `json:"known"`
	// Outside: the session's directory is not in this server's workspace,
	// so it is not opened again here.
	Outside bool `json:"outside,omitempty"`
	// Fork links a forked session to its parent (the list is drawn as a
	// tree).
	Fork *bridge.ForkOrigin `json:"fork,omitempty"`
	// Of an open session: how Steer puts text into a running turn ("":
	// the agent offers no way, the fallback applies), what it can fork,
	// and its prompt queue.
	SteerMode   bridge.SteerVia       `json:"steerMode,omitempty"`
	Forks       *forkChecks           `json:"forks,omitempty"`
	Queue       []bridge.QueuedPrompt `json:"queue,omitempty"`
	QueuePaused bool                  `json:"queuePaused,omitempty"`
}

// item describes a listed session. views are the live sessions' states as
// their events say (Snapshot): a turn whose turn_end has arrived is over,
// though its Prompt call may not have returned yet, and one that started
// is counted before its record is saved.
func (s *server) item(ctx context.Context, e bridge.SessionEntry, views map[string]bridge.SessionView) sessionItem {
	it := sessionItem{Key: e.Key, Agent: e.Bridge, NativeID: e.NativeID, Cwd: e.Cwd, Title: e.Title,
		UpdatedAt: e.UpdatedAt, Open: e.Open, Policy: bridge.Policy{Mode: bridge.ModeBuild}, Fork: e.Fork}
	if r := e.Record; r != nil {
		it.Turns, it.AgentMode = r.Turns, r.AgentMode
		it.Policy = bridge.Policy{Mode: bridge.ParseMode(r.Mode), ReadOnly: r.ReadOnly}
	}
	if sess := e.Session; sess != nil && e.Open {
		v := views[e.Key]
		it.Busy, it.Turns = v.Busy, max(it.Turns, v.Turn)
		it.Policy, it.AgentMode = sess.Policy(), sess.AgentMode()
		it.Queue, it.QueuePaused = v.Queue, v.QueuePaused
	}
	if it.Title == "" {
		it.Title = s.firstPrompt(ctx, e.Key)
	}
	_, err := s.agentNamed(e.Bridge)
	it.Known = err == nil
	it.Outside = e.Cwd != "" && !s.cfg.Workspace.contains(e.Cwd)
	return it
}

// views returns the live sessions' states by key.
func (s *server) views() map[string]bridge.SessionView {
	views := map[string]bridge.SessionView{}
	for _, v := range s.host.Snapshot().Sessions {
		views[v.Key] = v
	}
	return views
}

// titleLength bounds a title made from a prompt.
const titleLength = 80

// firstPrompt is the title of a session whose agent gave it none: its
// first prompt, from the journal, cut short.
func (s *server) firstPrompt(ctx context.Context, key string) string {
	if s.cfg.Journal == nil {
		return ""
	}
	evs, err := s.cfg.Journal.ReadEvents(ctx, bridge.EventQuery{Key: key, Limit: 20})
	if err != nil {
		return ""
	}
	for _, ev := range evs {
		if ev.Kind == bridge.KindTurnStart && ev.Text != "" {
			title := strings.Join(strings.Fields(ev.Text), " ")
			if r := []rune(title); len(r) > titleLength {
				title = string(r[:titleLength-1]) + "…"
			}
			return title
		}
	}
	return ""
}

func (s *server) handleSessions(w http.ResponseWriter, r *http.Request) {
	// An agent whose own list failed leaves the others' entries (and the
	// journal's): only a list that could not be made at all fails.
	entries, err := s.host.Sessions(r.Context())
	if err != nil && entries == nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	list := make([]sessionItem, 0, len(entries))
	views := s.views()
	for _, e := range entries {
		if e.Key != "" {
			list = append(list, s.item(r.Context(), e, views))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": list})
}

// entry finds a listed session by its key.
func (s *server) entry(ctx context.Context, key string) (bridge.SessionEntry, error) {
	entries, err := s.host.Sessions(ctx)
	if err != nil && entries == nil {
		return bridge.SessionEntry{}, err
	}
	for _, e := range entries {
		if e.Key == key {
			return e, nil
		}
	}
	return bridge.SessionEntry{}, fmt.Errorf("session %q: %w", key, errNotFound)
}

func (s *server) handleSessionState(w http.ResponseWriter, r *http.Request) {
	e, err := s.entry(r.Context(), r.PathValue("key"))
	if err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	it := s.item(r.Context(), e, s.views())
	if sess := e.Session; sess != nil && e.Open {
		it.SteerMode = sess.SteerMode()
		checks := s.checkForks(sess, it.Turns)
		it.Forks = &checks
	}
	writeJSON(w, http.StatusOK, it)
}

// openSession returns the open session with this host key.
func (s *server) openSession(key string) (*bridge.Session, error) {
	for _, b := range s.host.Bridges() {
		if sess := b.Session(key); sess != nil && sess.Key() == key {
			return sess, nil
		}
	}
	return nil, fmt.Errorf("session %q: %w", key, errNotOpen)
}

// newSessionRequest names the agent of a new session: by name, or by its
// index in the server's list. Nothing else is accepted.
type newSessionRequest struct {
	Agent string `json:"agent"`
}

func (s *server) handleNewSession(w http.ResponseWriter, r *http.Request) {
	var req newSessionRequest
	if !decode(w, r, &req) {
		return
	}
	a, err := s.agentNamed(req.Agent)
	if err != nil {
		writeError(w, http.StatusNotFound, err)
		return
	}
	sess, err := s.start(a, "", nil)
	if err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"key": sess.Key()})
}

// handleOpen opens a listed session again (after the server restarted, or
// it was closed): its agent resumes it where it can; its history is in
// the journal already, so what the agent replays of it is dropped.
func (s *server) handleOpen(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	if sess, err := s.openSession(key); err == nil {
		writeJSON(w, http.StatusOK, map[string]string{"key": sess.Key()})
		return
	}
	e, err := s.entry(r.Context(), key)
	if err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	a, err := s.agentNamed(e.Bridge)
	if err != nil {
		writeError(w, http.StatusConflict, fmt.Errorf("this session's agent is not running here: %w", err))
		return
	}
	sess, err := s.start(a, key, e.Record)
	if err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"key": sess.Key()})
}

// start opens a session of agent a: a new one, or the journaled one under
// key with its record's workspace and policy. It runs on the server's
// context, not the request's: a tab that goes away does not leave an
// agent half-way through opening.
func (s *server) start(a *agent, key string, rec *bridge.Record) (*bridge.Session, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.StartTimeout)
	defer cancel()
	b, err := a.start(ctx, s)
	if err != nil {
		return nil, err
	}
	dir := s.cfg.Workspace.cwd
	cfg := bridge.SessionConfig{Key: key, Policy: bridge.Policy{Mode: bridge.ModeBuild}}
	if rec != nil {
		if rec.Cwd != "" {
			dir = rec.Cwd
		}
		if !s.cfg.Workspace.contains(dir) {
			return nil, fmt.Errorf("session %s in %s: %w (%s); start webui with --cwd there to reopen it", key, dir, errOutsideWorkspace, s.cfg.Workspace.cwd)
		}
		cfg.Policy = bridge.Policy{Mode: bridge.ParseMode(rec.Mode), ReadOnly: rec.ReadOnly}
	}
	cfg.Cwd = dir
	cfg.Checkpoints = s.checkpointsFor()
	files, err := s.cfg.Workspace.files(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("the session's workspace: %w", err)
	}
	cfg.Files = files
	sess, err := b.OpenSession(ctx, cfg)
	if err != nil {
		files.Close()
		return nil, err
	}
	s.mu.Lock()
	if old := s.files[sess.Key()]; old != nil {
		old.Close()
	}
	s.files[sess.Key()] = files
	s.mu.Unlock()
	return sess, nil
}

func (s *server) handleClose(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	sess, err := s.openSession(key)
	if err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	err = sess.Close(r.Context())
	s.mu.Lock()
	if f := s.files[key]; f != nil {
		f.Close()
		delete(s.files, key)
	}
	s.mu.Unlock()
	if err != nil && !errors.Is(err, bridge.ErrSessionClosed) {
		writeError(w, errorStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"closed": true})
}
