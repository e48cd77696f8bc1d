package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
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

// NativeSession is one agent session id a host session key was attached
// to, and why it replaced the one before.
type NativeSession struct {
	ID string `json:"id"`
	// Reason says why this id replaced the previous one ("" for the first).
	Reason string    `json:"reason,omitempty"`
	Since  time.Time `json:"since"`
}
