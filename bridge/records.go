package bridge

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/acphost/acphost/acpclient"
)

// A session's record concern (sessionRecords, declared in state.go):
// building its Record, writing it to the Host's journal and the session's
// Store, and reading it back at open. store.go has the Record itself.

// updatedAt is the update time of the record last written, or zero.
func (r *sessionRecords) updatedAt() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		return time.Time{}
	}
	return r.last.UpdatedAt
}

// record builds the session's Record from its current state.
func (r *sessionRecords) record() Record {
	s := r.s
	p := s.Policy()
	s.mu.Lock()
	rec := Record{Key: s.key, Bridge: s.b.cfg.ID, NativeSessionID: s.id, NativeHistory: slices.Clone(s.natives),
		Title: s.title, Turns: s.turns.started, CreatedAt: s.created,
		Model: s.cfg.Model, Effort: s.cfg.Effort, // set mid-turn by control calls, under mu
		SessionMode: s.agentMode, ConfigValues: configValues(s.configOptions), Fork: s.origin()}
	s.mu.Unlock()
	rec.Provider, rec.Cwd = s.b.provider.Name, s.cfg.Cwd
	rec.Queue = s.queue.persisted()
	if s.worktree != nil {
		w := *s.worktree
		rec.Worktree = &w
	}
	rec.Mode, rec.ReadOnly, rec.ExternalDirectories = string(p.Mode), p.ReadOnly, s.Grants()
	if l := s.b.Launch(); l != nil {
		o := l.Options()
		rec.AgentMode = o.AgentMode
		if a, ok := o.Vendor.(ApprovalPolicyOption); ok {
			rec.ApprovalPolicy = a.ApprovalPolicy()
		}
	}
	rec.UpdatedAt = s.b.clock.Now()
	return rec
}

// save writes the session's record to the Host's journal and to the
// session's Store, whichever are set.
func (r *sessionRecords) save() {
	s := r.s
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.id == "" || s.isClosed() {
		return
	}
	rec := r.record()
	r.last = &rec
	r.writeRecord(rec)
}

// saveProgress refreshes what a turn changes (turn count, title, update
// time) in the record last written. It reads nothing a control call may be
// changing, so it is safe from the agent's goroutine.
func (r *sessionRecords) saveProgress() {
	s := r.s
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil || s.isClosed() {
		return
	}
	rec := *r.last
	s.mu.Lock()
	rec.Turns, rec.Title = s.turns.started, s.title
	// What the agent changed by itself in the turn (a mode it left, say).
	rec.SessionMode, rec.ConfigValues = s.agentMode, configValues(s.configOptions)
	s.mu.Unlock()
	rec.Queue = s.queue.persisted()
	rec.UpdatedAt = s.b.clock.Now()
	r.last = &rec
	r.writeRecord(rec)
}

func (r *sessionRecords) writeRecord(rec Record) {
	s := r.s
	// The record outlives any caller's context: it is written whole or not.
	ctx := context.Background()
	if j := s.b.host.journal; j != nil {
		if err := j.SaveSession(ctx, s.key, rec); err != nil {
			s.emit(Event{Kind: KindError, Err: fmt.Errorf("journaling session %s: %w", s.key, err)})
		}
	}
	if s.cfg.Store != nil {
		if err := s.cfg.Store.Save(s.key, rec); err != nil {
			s.emit(Event{Kind: KindError, Err: fmt.Errorf("saving session state: %w", err)})
		}
	}
}

// recall reads the record saved under the session's key (the journal
// first, then the Store) and takes over its identity: the native history,
// the creation time, the working directory when cfg has none. It returns
// the native session to resume: cfg.ResumeID, else the record's.
func (r *sessionRecords) recall(ctx context.Context) (string, error) {
	s := r.s
	rec, ok, err := r.loadRecord(ctx)
	if err != nil || !ok {
		return s.cfg.ResumeID, err
	}
	s.natives = slices.Clone(rec.NativeHistory) // s is not shared yet
	if len(s.natives) == 0 && rec.NativeSessionID != "" {
		s.natives = []NativeSession{{ID: rec.NativeSessionID, Since: rec.CreatedAt}}
	}
	if !rec.CreatedAt.IsZero() {
		s.created = rec.CreatedAt
	}
	s.title = rec.Title
	s.fork = rec.Fork
	// Turn numbers go on from the recorded ones.
	s.turns.started = rec.Turns
	s.queue.restore(rec.Queue) // paused: nothing runs unasked after a restart
	// The model and effort chosen last, unless the app chooses now; the
	// agent mode and config values are set back once the session is open.
	s.cfg.Model = cmp.Or(s.cfg.Model, rec.Model)
	s.cfg.Effort = cmp.Or(s.cfg.Effort, rec.Effort)
	s.recorded = &rec
	if rec.Worktree != nil {
		// The session owns its recorded worktree, and works in it again
		// when opened with the same Worktree option.
		w := *rec.Worktree
		s.worktree = &w
		if s.cfg.Worktree != nil {
			s.cfg.Cwd = rec.Cwd
		}
	}
	switch {
	case s.cfg.Cwd == "":
		s.cfg.Cwd = rec.Cwd
	case rec.Cwd != "" && filepath.Clean(s.cfg.Cwd) != filepath.Clean(rec.Cwd) && !s.cfg.MoveCwd:
		return "", fmt.Errorf("bridge %s: session %s was recorded in %s, not %s (open it without a Cwd to keep its directory, or set MoveCwd to move it): %w",
			s.b.cfg.ID, s.key, rec.Cwd, s.cfg.Cwd, ErrCwdChanged)
	}
	if s.cfg.ResumeID != "" {
		return s.cfg.ResumeID, nil
	}
	return rec.NativeSessionID, nil
}

func (r *sessionRecords) loadRecord(ctx context.Context) (Record, bool, error) {
	s := r.s
	if j := s.b.host.journal; j != nil {
		rec, ok, err := j.LoadSession(ctx, s.key)
		if err != nil {
			return Record{}, false, fmt.Errorf("bridge %s: reading the journal's record of session %s: %w", s.b.cfg.ID, s.key, err)
		}
		if ok {
			return rec, true, nil
		}
	}
	if s.cfg.Store != nil {
		rec, ok, err := s.cfg.Store.Load(s.key)
		if err != nil {
			return Record{}, false, fmt.Errorf("bridge %s: reading the stored record of session %s: %w", s.b.cfg.ID, s.key, err)
		}
		return rec, ok, nil
	}
	return Record{}, false, nil
}

// configValues is the current value of each option, as a Record keeps it.
func configValues(opts []acpclient.ConfigOption) map[string]string {
	if len(opts) == 0 {
		return nil
	}
	out := make(map[string]string, len(opts))
	for _, o := range opts {
		switch o.Type {
		case acpclient.ConfigBoolean:
			out[o.ID] = fmt.Sprint(o.BoolValue)
		case acpclient.ConfigSelect:
			out[o.ID] = o.Value
		}
	}
	return out
}
