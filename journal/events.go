package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/acphost/acphost/bridge"
)

// defaultLimit is how many events ReadEvents returns when the query sets
// no Limit.
const defaultLimit = 1000

// ErrNoPos reports an event given to Append without a position: the Host
// numbers events before it journals them, and Pos 0 means "none".
var ErrNoPos = errors.New("event has no Pos")

// appendStmts are the writer's statements, prepared once: Append runs them
// for every event of every batch.
type appendStmts struct {
	insertEvent, touchSession, raisePos *sql.Stmt
}

const insertEventSQL = `INSERT INTO events
	(pos, key, bridge, session, seq, turn, kind, time, replay, late, event)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// touchSessionSQL creates the minimal row of a session key first seen in
// a batch, or advances the columns Append keeps up to date. ?9 says
// whether the batch changed the title (to ?8, possibly empty).
const touchSessionSQL = `INSERT INTO sessions
	(key, bridge, native_id, created_at, updated_at, last_seq, last_pos, title)
	VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, CASE WHEN ?9 THEN ?8 ELSE '' END)
	ON CONFLICT (key) DO UPDATE SET
	bridge = CASE WHEN bridge = '' THEN excluded.bridge ELSE bridge END,
	native_id = CASE WHEN native_id = '' THEN excluded.native_id ELSE native_id END,
	updated_at = CASE WHEN updated_at IS NULL OR excluded.updated_at > updated_at
		THEN excluded.updated_at ELSE updated_at END,
	last_seq = max(last_seq, excluded.last_seq),
	last_pos = max(last_pos, excluded.last_pos),
	title = CASE WHEN ?9 THEN ?8 ELSE title END`

const raisePosSQL = `UPDATE meta SET value = max(value, ?) WHERE name = 'last_pos'`

func (s *appendStmts) prepare(ctx context.Context, db *sql.DB) error {
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{{&s.insertEvent, insertEventSQL}, {&s.touchSession, touchSessionSQL}, {&s.raisePos, raisePosSQL}} {
		stmt, err := db.PrepareContext(ctx, p.sql)
		if err != nil {
			return fmt.Errorf("preparing statements: %w", err)
		}
		*p.stmt = stmt
	}
	return nil
}

func (s *appendStmts) close() error {
	var errs []error
	for _, stmt := range []*sql.Stmt{s.insertEvent, s.touchSession, s.raisePos} {
		if stmt != nil {
			errs = append(errs, stmt.Close())
		}
	}
	return errors.Join(errs...)
}

// keyTouch is what one transaction changes in the row of one session key.
type keyTouch struct {
	key, bridge, native string
	first, last         time.Time
	lastSeq, lastPos    uint64
	title               string
	titleSet            bool
}

// eventRow is one event as the events table stores it, with what its
// session's row needs: encoded once, when it is appended, so that a row
// waiting for a later commit keeps nothing of the caller's.
type eventRow struct {
	pos, seq, turn uint64
	key, bridge    string
	session, kind  string
	time           time.Time
	replay, late   bool
	doc            string // text: the column is TEXT, a []byte would bind as a BLOB
	title          string
	titleSet       bool // a session_info event that changes the title to title
	ends           bool // a turn end: what waits for a commit is committed with it
}

// Append stores a batch of events, whole or not at all, and creates or
// advances the sessions row of every session key in it (updated_at,
// last_seq, last_pos, and the title from session_info events that change
// it). Events with an empty Key (agent-wide) get no sessions row. An
// event whose Pos is already stored fails the whole batch.
//
// With Options.CommitDelay zero the batch is one transaction, committed
// when Append returns. With a delay, Append may return before the batch
// is committed: see Options.CommitDelay for when it is. Either way a
// failed Append stored none of its events, so the caller may append them
// again.
func (db *DB) Append(ctx context.Context, events []bridge.Event) error {
	if len(events) == 0 {
		return nil
	}
	rows, err := rowsOf(events)
	if err != nil {
		return err
	}
	if db.commits != nil {
		return db.commits.add(ctx, rows)
	}
	return db.commitRows(ctx, rows)
}

// encodeBuffers are the buffers rowsOf encodes events into before it
// copies each document into its row. Under a flood the Host appends
// batches of one or two merged texts of a few KiB: a buffer of each
// batch's own was grown anew for every one of them.
var encodeBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxKeptEncodeBuffer bounds the buffers encodeBuffers keeps, so that one
// huge event does not pin its buffer.
const maxKeptEncodeBuffer = 64 << 10

// rowsOf encodes a batch, before any transaction, which then holds the
// write lock only for the inserts.
func rowsOf(events []bridge.Event) ([]eventRow, error) {
	rows := make([]eventRow, len(events))
	kept := encodeBuffers.Get().(*[]byte)
	buf := *kept
	defer func() {
		if cap(buf) <= maxKeptEncodeBuffer {
			*kept = buf[:0]
			encodeBuffers.Put(kept)
		}
	}()
	for i := range events {
		ev := &events[i]
		if ev.Pos == 0 {
			return nil, fmt.Errorf("journal: appending a %s event of %q: %w", ev.Kind, ev.Key, ErrNoPos)
		}
		var err error
		if buf, err = ev.AppendJSON(buf[:0]); err != nil {
			return nil, fmt.Errorf("journal: encoding event %d: %w", ev.Pos, err)
		}
		rows[i] = eventRow{pos: ev.Pos, seq: ev.Seq, turn: ev.Turn, key: ev.Key, bridge: ev.Bridge,
			session: ev.Session, kind: string(ev.Kind), time: ev.Time, replay: ev.Replay, late: ev.Late,
			doc: string(buf), ends: ev.Kind == bridge.KindTurnEnd}
		if ev.Kind == bridge.KindSessionInfo && ev.SessionInfo != nil && ev.SessionInfo.TitleChanged {
			rows[i].title, rows[i].titleSet = ev.SessionInfo.Title, true
		}
	}
	return rows, nil
}

// commitRows stores rows in one transaction.
func (db *DB) commitRows(ctx context.Context, rows []eventRow) error {
	if err := db.appendTx(ctx, rows, touches(rows)); err != nil {
		return fmt.Errorf("journal: appending events %d-%d: %w", rows[0].pos, rows[len(rows)-1].pos, err)
	}
	return nil
}

// touches folds rows into one change per session key, in the order the
// keys first appear.
func touches(rows []eventRow) []*keyTouch {
	var order []*keyTouch
	byKey := map[string]*keyTouch{}
	for _, r := range rows {
		if r.key == "" {
			continue
		}
		t := byKey[r.key]
		if t == nil {
			t = &keyTouch{key: r.key, bridge: r.bridge, native: r.session, first: r.time}
			byKey[r.key] = t
			order = append(order, t)
		}
		if t.native == "" {
			t.native = r.session
		}
		if r.time.After(t.last) {
			t.last = r.time
		}
		t.lastSeq = max(t.lastSeq, r.seq)
		t.lastPos = max(t.lastPos, r.pos)
		if r.titleSet {
			t.title, t.titleSet = r.title, true
		}
	}
	return order
}

func (db *DB) appendTx(ctx context.Context, rows []eventRow, keys []*keyTouch) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	insert := tx.StmtContext(ctx, db.stmts.insertEvent)
	var maxPos uint64
	for _, r := range rows {
		if _, err := insert.ExecContext(ctx, r.pos, r.key, r.bridge, r.session, r.seq, r.turn,
			r.kind, timeText(r.time), boolInt(r.replay), boolInt(r.late), r.doc); err != nil {
			return fmt.Errorf("event %d: %w", r.pos, err)
		}
		maxPos = max(maxPos, r.pos)
	}
	touch := tx.StmtContext(ctx, db.stmts.touchSession)
	now := time.Now()
	for _, k := range keys {
		first, last := k.first, k.last
		if first.IsZero() {
			first = now
		}
		if last.IsZero() {
			last = now
		}
		if _, err := touch.ExecContext(ctx, k.key, k.bridge, k.native, timeText(first), timeText(last),
			k.lastSeq, k.lastPos, k.title, boolInt(k.titleSet)); err != nil {
			return fmt.Errorf("session %q: %w", k.key, err)
		}
	}
	if _, err := tx.StmtContext(ctx, db.stmts.raisePos).ExecContext(ctx, maxPos); err != nil {
		return fmt.Errorf("recording the last position: %w", err)
	}
	return tx.Commit()
}

// ReadEvents returns up to q.Limit events (1000 when unset) with Pos
// after q.After, of q.Key and q.Bridge when set, in Pos order.
func (db *DB) ReadEvents(ctx context.Context, q bridge.EventQuery) ([]bridge.Event, error) {
	if err := db.Flush(ctx); err != nil {
		return nil, err
	}
	where := []string{"pos > ?"}
	args := []any{q.After}
	if q.Key != "" {
		where, args = append(where, "key = ?"), append(args, q.Key)
	}
	if q.Bridge != "" {
		where, args = append(where, "bridge = ?"), append(args, q.Bridge)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	args = append(args, limit)
	rows, err := db.read.QueryContext(ctx,
		"SELECT pos, event FROM events WHERE "+strings.Join(where, " AND ")+" ORDER BY pos LIMIT ?", args...)
	if err != nil {
		return nil, fmt.Errorf("journal: reading events after %d: %w", q.After, err)
	}
	defer rows.Close()
	var out []bridge.Event
	for rows.Next() {
		var pos uint64
		var doc []byte
		if err := rows.Scan(&pos, &doc); err != nil {
			return nil, fmt.Errorf("journal: reading events after %d: %w", q.After, err)
		}
		var ev bridge.Event
		if err := json.Unmarshal(doc, &ev); err != nil {
			return nil, fmt.Errorf("journal: decoding event %d: %w", pos, err)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("journal: reading events after %d: %w", q.After, err)
	}
	return out, nil
}

// LastPos is the highest Pos ever appended (0 for a new journal). It does
// not go back when DeleteSession removes the latest events: positions are
// subscribers' cursors and are never reused.
func (db *DB) LastPos(ctx context.Context) (uint64, error) {
	if err := db.Flush(ctx); err != nil {
		return 0, err
	}
	var pos uint64
	err := db.read.QueryRowContext(ctx, "SELECT value FROM meta WHERE name = 'last_pos'").Scan(&pos)
	if err != nil {
		return 0, fmt.Errorf("journal: reading the last position: %w", err)
	}
	return pos, nil
}

// LastSeq is the highest Seq appended for the session key (0 when the key
// has no events, and for the agent-wide key "").
func (db *DB) LastSeq(ctx context.Context, key string) (uint64, error) {
	if err := db.Flush(ctx); err != nil {
		return 0, err
	}
	var seq uint64
	err := db.read.QueryRowContext(ctx, "SELECT last_seq FROM sessions WHERE key = ?", key).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("journal: reading the last seq of session %q: %w", key, err)
	}
	return seq, nil
}
