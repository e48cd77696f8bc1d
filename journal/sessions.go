package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/acphost/acphost/bridge"
)

// ErrNoKey reports a session call without a session key.
var ErrNoKey = errors.New("empty session key")

// saveSessionSQL replaces a session's record. The columns Append keeps
// (bridge, native_id, title, created_at) survive a record that leaves them
// empty, last_seq and last_pos are never touched, and updated_at never
// goes back.
const saveSessionSQL = `INSERT INTO sessions
	(key, bridge, provider, native_id, cwd, model, effort, mode, read_only,
	 approval_policy, agent_mode, grants, title, turns, created_at, updated_at,
	 session_mode, config_values, fork_parent, fork_parent_session, fork_after_turn, fork_transcript, queue, worktree)
	VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, COALESCE(?15, ?16), ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24)
	ON CONFLICT (key) DO UPDATE SET
	bridge = CASE WHEN ?2 = '' THEN bridge ELSE ?2 END,
	provider = ?3,
	native_id = CASE WHEN ?4 = '' THEN native_id ELSE ?4 END,
	cwd = ?5, model = ?6, effort = ?7, mode = ?8, read_only = ?9,
	approval_policy = ?10, agent_mode = ?11, grants = ?12,
	title = CASE WHEN ?13 = '' THEN title ELSE ?13 END,
	turns = ?14, session_mode = ?17, config_values = ?18,
	fork_parent = ?19, fork_parent_session = ?20, fork_after_turn = ?21, fork_transcript = ?22, queue = ?23, worktree = ?24,
	created_at = COALESCE(?15, created_at, ?16),
	updated_at = CASE WHEN updated_at IS NULL OR ?16 > updated_at THEN ?16 ELSE updated_at END`

// SaveSession stores rec as the record of session key, replacing the
// previous one, and its NativeHistory as the key's native_sessions rows.
// What Append maintains is kept: last_seq and last_pos always; the
// bridge, native id, title and creation time when rec leaves them empty.
// updated_at becomes rec.UpdatedAt (now when unset) unless the row was
// updated later.
func (db *DB) SaveSession(ctx context.Context, key string, rec bridge.Record) error {
	if key == "" {
		return fmt.Errorf("journal: saving a session: %w", ErrNoKey)
	}
	if err := db.Flush(ctx); err != nil {
		return err
	}
	if err := db.saveTx(ctx, key, rec); err != nil {
		return fmt.Errorf("journal: saving session %q: %w", key, err)
	}
	return nil
}

func (db *DB) saveTx(ctx context.Context, key string, rec bridge.Record) error {
	grants, err := json.Marshal(rec.ExternalDirectories)
	if err != nil {
		return err
	}
	if rec.ExternalDirectories == nil {
		grants = []byte("[]")
	}
	values, err := json.Marshal(rec.ConfigValues)
	if err != nil {
		return err
	}
	if rec.ConfigValues == nil {
		values = []byte("{}")
	}
	queue := []byte("[]")
	if len(rec.Queue) > 0 {
		if queue, err = json.Marshal(rec.Queue); err != nil {
			return err
		}
	}
	var worktree []byte
	if rec.Worktree != nil {
		if worktree, err = json.Marshal(rec.Worktree); err != nil {
			return err
		}
	}
	var fork bridge.ForkOrigin
	if rec.Fork != nil {
		fork = *rec.Fork
	}
	updated := rec.UpdatedAt
	if updated.IsZero() {
		updated = time.Now()
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, saveSessionSQL, key, rec.Bridge, rec.Provider, rec.NativeSessionID,
		rec.Cwd, rec.Model, rec.Effort, rec.Mode, boolInt(rec.ReadOnly), rec.ApprovalPolicy, rec.AgentMode,
		string(grants), rec.Title, rec.Turns, timeText(rec.CreatedAt), timeText(updated),
		rec.SessionMode, string(values), fork.Parent, fork.ParentSession, fork.AfterTurn, boolInt(fork.Transcript),
		string(queue), string(worktree)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM native_sessions WHERE key = ?", key); err != nil {
		return err
	}
	for i, n := range rec.NativeHistory {
		if _, err := tx.ExecContext(ctx,
			"INSERT INTO native_sessions (key, ordinal, native_id, reason, since) VALUES (?, ?, ?, ?, ?)",
			key, i+1, n.ID, n.Reason, timeText(n.Since)); err != nil {
			return fmt.Errorf("native session %d: %w", i+1, err)
		}
	}
	return tx.Commit()
}

const recordColumns = `key, bridge, provider, native_id, cwd, model, effort, mode, read_only,
	approval_policy, agent_mode, grants, title, turns, created_at, updated_at, session_mode, config_values,
	fork_parent, fork_parent_session, fork_after_turn, fork_transcript, queue, worktree`

// LoadSession returns the record of session key, with its native history.
func (db *DB) LoadSession(ctx context.Context, key string) (bridge.Record, bool, error) {
	if err := db.Flush(ctx); err != nil {
		return bridge.Record{}, false, err
	}
	recs, err := db.readRecords(ctx, "WHERE key = ?", key)
	if err != nil {
		return bridge.Record{}, false, fmt.Errorf("journal: loading session %q: %w", key, err)
	}
	if len(recs) == 0 {
		return bridge.Record{}, false, nil
	}
	return recs[0], true, nil
}

// Sessions lists every session record, most recently updated first (ties
// by key).
func (db *DB) Sessions(ctx context.Context) ([]bridge.Record, error) {
	if err := db.Flush(ctx); err != nil {
		return nil, err
	}
	recs, err := db.readRecords(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("journal: listing sessions: %w", err)
	}
	return recs, nil
}

// readRecords reads the records that match where, and their histories, in
// one read transaction so both come from the same snapshot.
func (db *DB) readRecords(ctx context.Context, where string, args ...any) ([]bridge.Record, error) {
	tx, err := db.read.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, "SELECT "+recordColumns+" FROM sessions "+where+
		" ORDER BY updated_at DESC, key", args...)
	if err != nil {
		return nil, err
	}
	var recs []bridge.Record
	index := map[string]int{}
	for rows.Next() {
		rec, err := scanRecord(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		index[rec.Key] = len(recs)
		recs = append(recs, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, nil
	}
	if err := readHistories(ctx, tx, where, args, recs, index); err != nil {
		return nil, err
	}
	return recs, nil
}

func scanRecord(rows *sql.Rows) (bridge.Record, error) {
	var rec bridge.Record
	var readOnly int
	var grants, values, queue, worktree string
	var created, updated sql.NullString
	var fork bridge.ForkOrigin
	var transcript int
	if err := rows.Scan(&rec.Key, &rec.Bridge, &rec.Provider, &rec.NativeSessionID, &rec.Cwd, &rec.Model,
		&rec.Effort, &rec.Mode, &readOnly, &rec.ApprovalPolicy, &rec.AgentMode, &grants, &rec.Title,
		&rec.Turns, &created, &updated, &rec.SessionMode, &values,
		&fork.Parent, &fork.ParentSession, &fork.AfterTurn, &transcript, &queue, &worktree); err != nil {
		return rec, err
	}
	if worktree != "" {
		rec.Worktree = new(bridge.Worktree)
		if err := json.Unmarshal([]byte(worktree), rec.Worktree); err != nil {
			return rec, fmt.Errorf("worktree of session %q: %w", rec.Key, err)
		}
	}
	if err := json.Unmarshal([]byte(queue), &rec.Queue); err != nil {
		return rec, fmt.Errorf("prompt queue of session %q: %w", rec.Key, err)
	}
	if len(rec.Queue) == 0 {
		rec.Queue = nil
	}
	fork.Transcript = transcript != 0
	if fork.Parent != "" {
		rec.Fork = &fork
	}
	if err := json.Unmarshal([]byte(values), &rec.ConfigValues); err != nil {
		return rec, fmt.Errorf("config values of session %q: %w", rec.Key, err)
	}
	if len(rec.ConfigValues) == 0 {
		rec.ConfigValues = nil
	}
	rec.ReadOnly = readOnly != 0
	if err := json.Unmarshal([]byte(grants), &rec.ExternalDirectories); err != nil {
		return rec, fmt.Errorf("grants of session %q: %w", rec.Key, err)
	}
	if len(rec.ExternalDirectories) == 0 {
		rec.ExternalDirectories = nil
	}
	var err error
	if rec.CreatedAt, err = parseTime(created); err != nil {
		return rec, err
	}
	rec.UpdatedAt, err = parseTime(updated)
	return rec, err
}

// readHistories fills in the NativeHistory of recs, found by index.
func readHistories(ctx context.Context, tx *sql.Tx, where string, args []any, recs []bridge.Record, index map[string]int) error {
	rows, err := tx.QueryContext(ctx, "SELECT key, native_id, reason, since FROM native_sessions "+where+
		" ORDER BY key, ordinal", args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var n bridge.NativeSession
		var since sql.NullString
		if err := rows.Scan(&key, &n.ID, &n.Reason, &since); err != nil {
			return err
		}
		if n.Since, err = parseTime(since); err != nil {
			return err
		}
		if i, ok := index[key]; ok {
			recs[i].NativeHistory = append(recs[i].NativeHistory, n)
		}
	}
	return rows.Err()
}

// DeleteSession removes the record of session key, its native history and
// its events, in one transaction. Deleting an unknown key is not an error.
func (db *DB) DeleteSession(ctx context.Context, key string) error {
	if key == "" {
		return fmt.Errorf("journal: deleting a session: %w", ErrNoKey)
	}
	if err := db.Flush(ctx); err != nil {
		return err
	}
	if err := db.deleteTx(ctx, key); err != nil {
		return fmt.Errorf("journal: deleting session %q: %w", key, err)
	}
	return nil
}

func (db *DB) deleteTx(ctx context.Context, key string) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, table := range []string{"events", "native_sessions", "sessions"} {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE key = ?", key); err != nil {
			return fmt.Errorf("%s: %w", table, err)
		}
	}
	return tx.Commit()
}
