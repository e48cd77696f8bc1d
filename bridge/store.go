package bridge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Record is what must survive an app restart to resume a session. For a
// profile launch it also keeps the launch's AgentMode and, when the
// profile's Vendor options carry one (ApprovalPolicyOption), the agent's
// native approval policy.
type Record struct {
	// Key is the host's session key (SessionConfig.Key); Bridge the id of
	// the bridge that ran it.
	Key    string `json:"key,omitempty"`
	Bridge string `json:"bridge,omitempty"`
	// NativeSessionID is the agent's current session id; NativeHistory
	// every id the key was attached to, oldest first.
	NativeSessionID     string          `json:"nativeSessionId"`
	NativeHistory       []NativeSession `json:"nativeHistory,omitempty"`
	Title               string          `json:"title,omitempty"`
	Provider            string          `json:"provider,omitempty"`
	Cwd                 string          `json:"cwd,omitempty"`
	Model               string          `json:"model,omitempty"`
	Effort              string          `json:"effort,omitempty"`
	Mode                string          `json:"mode,omitempty"`
	ReadOnly            bool            `json:"readOnly,omitempty"`
	ApprovalPolicy      string          `json:"approvalPolicy,omitempty"`
	AgentMode           string          `json:"agentMode,omitempty"`
	ExternalDirectories []string        `json:"externalDirectories,omitempty"`
	// SessionMode is the agent's session mode (Session.AgentMode) and
	// ConfigValues the current value of each of its config options, by
	// option id ("true"/"false" for a boolean), as last saved: a resumed
	// session is set back to them (see OpenSession).
	SessionMode  string            `json:"sessionMode,omitempty"`
	ConfigValues map[string]string `json:"configValues,omitempty"`
	// Turns is how many turns the session has started (a turn is counted
	// when it starts, so one a crash interrupted is counted too).
	Turns uint64 `json:"turns,omitempty"`
	// Fork links a session made by Session.Fork to the session it was
	// forked from and the turn it branched after.
	Fork      *ForkOrigin `json:"fork,omitempty"`
	CreatedAt time.Time   `json:"createdAt,omitzero"`
	UpdatedAt time.Time   `json:"updatedAt"`
	// Queue is the session's prompt queue (Session.Enqueue), first to run
	// first: a resumed session has it back, paused.
	Queue []QueuedPrompt `json:"queue,omitempty"`
	// Worktree is the git worktree the session works in and owns
	// (SessionConfig.Worktree), removed when the session is deleted.
	Worktree *Worktree `json:"worktree,omitempty"`
}

// ApprovalPolicyOption is implemented by the Vendor options of profiles
// whose agent has a native approval policy chosen at launch, so the store
// can record it (Record.ApprovalPolicy) without knowing the profile.
type ApprovalPolicyOption interface {
	ApprovalPolicy() string
}

// Store keeps Records by session key (SessionConfig.Key), for apps whose
// Host has no Journal; FileStore is the one this package provides.
type Store interface {
	Load(key string) (Record, bool, error)
	Save(key string, rec Record) error
	Delete(key string) error
}

// FileStore is a Store in one JSON file, rewritten atomically on every
// change with fsroot's atomic write (temporary file, fsync, rename; the
// file's mode kept, 0600 when new), so a crash leaves the old or the new
// content, never a torn file; a file this user may not write is refused. It is safe for concurrent use in one process.
type FileStore struct {
	path string
	mu   sync.Mutex
}

// NewFileStore returns a FileStore at path; the file is created on first
// Save.
func NewFileStore(path string) *FileStore { return &FileStore{path: path} }

func (s *FileStore) read() (map[string]Record, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]Record{}, nil
	}
	if err != nil {
		return nil, err
	}
	recs := map[string]Record{}
	if err := json.Unmarshal(data, &recs); err != nil {
		return nil, fmt.Errorf("bridge: session store %s is corrupt: %w", s.path, err)
	}
	return recs, nil
}

func (s *FileStore) write(recs map[string]Record) error {
	data, err := json.MarshalIndent(recs, "", "  ")
	if err != nil {
		return err
	}
	return writeFileLocal(context.Background(), s.path, data, 0o600, 0o700)
}

// Load returns the record saved under key.
func (s *FileStore) Load(key string) (Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	recs, err := s.read()
	if err != nil {
		return Record{}, false, err
	}
	rec, ok := recs[key]
	return rec, ok, nil
}

// Save stores rec under key, stamping its UpdatedAt.
func (s *FileStore) Save(key string, rec Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	recs, err := s.read()
	if err != nil {
		return err
	}
	rec.UpdatedAt = time.Now().UTC()
	recs[key] = rec
	return s.write(recs)
}

// Delete removes the record under key.
func (s *FileStore) Delete(key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	recs, err := s.read()
	if err != nil {
		return err
	}
	if _, ok := recs[key]; !ok {
		return nil
	}
	delete(recs, key)
	return s.write(recs)
}

// sessionRecords is a session's record concern: building its Record,
// writing it to the Host's journal and the session's Store, and reading it
// back at open. mu orders the writes and guards last; s is set once, when
// the session is made.
type sessionRecords struct {
	s    *Session
	mu   sync.Mutex
	last *Record // the record last written
}

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
