package journal

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/fakeclock"
)

// testClock is a fake clock as a bridge.Clock.
type testClock struct{ *fakeclock.Clock }

func (c testClock) AfterFunc(d time.Duration, f func()) bridge.Timer { return c.Clock.AfterFunc(d, f) }

const testDelay = 50 * time.Millisecond

// openDelayed opens a journal with a CommitDelay timed by a fake clock, and
// a read-only DB on the same file that sees only what is committed.
func openDelayed(t *testing.T) (db, committed *DB, clock testClock, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "journal.db")
	clock = testClock{fakeclock.New()}
	db, err := Open(context.Background(), path, &Options{CommitDelay: testDelay, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, openReadOnly(t, path), clock, path
}

func openReadOnly(t *testing.T, path string) *DB {
	t.Helper()
	ro, err := Open(context.Background(), path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	return ro
}

// committedPositions lists the Pos of the events committed to ro's file.
func committedPositions(t *testing.T, ro *DB) []uint64 {
	t.Helper()
	rows, err := ro.read.Query("SELECT pos FROM events ORDER BY pos")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []uint64
	for rows.Next() {
		var p uint64
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// waitCommitted waits (boundedly) until ro sees exactly want.
func waitCommitted(t *testing.T, ro *DB, want []uint64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		got := committedPositions(t, ro)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("committed %v, want %v", got, want)
		}
	}
}

func turnEndEvent(pos uint64, key string, seq uint64) bridge.Event {
	ev := textEvent(pos, key, seq)
	ev.Kind, ev.Text, ev.MessageID = bridge.KindTurnEnd, "", ""
	return ev
}

// TestCommitDelayGroupsAppends: with a CommitDelay, Appends return before
// their events are committed, and the delay after the first commits them
// all, in one go.
func TestCommitDelayGroupsAppends(t *testing.T) {
	db, ro, clock, _ := openDelayed(t)
	pos, last := uint64(0), map[string]uint64{}
	for range 3 {
		mustAppend(t, db, flood(4, &pos, []string{"k1", "k2"}, last)...)
	}
	if got := committedPositions(t, ro); len(got) != 0 {
		t.Fatalf("committed %v before the delay", got)
	}
	if n := clock.Pending(); n != 1 {
		t.Fatalf("%d timers wait, want the one of the first Append", n)
	}
	clock.Advance(testDelay - time.Millisecond)
	if got := committedPositions(t, ro); len(got) != 0 {
		t.Fatalf("committed %v before the delay", got)
	}
	clock.Advance(time.Millisecond)
	waitCommitted(t, ro, posRange(1, 12))
	if seq, err := ro.LastSeq(context.Background(), "k2"); err != nil || seq != 6 {
		t.Fatalf("committed LastSeq(k2) = %d, %v; want 6", seq, err)
	}
}

// TestCommitDelayTurnEndCommits: a batch with a turn's end is committed,
// with what waited before it, before its Append returns.
func TestCommitDelayTurnEndCommits(t *testing.T) {
	db, ro, clock, _ := openDelayed(t)
	mustAppend(t, db, textEvent(1, "k1", 1), textEvent(2, "k1", 2))
	mustAppend(t, db, textEvent(3, "k1", 3), turnEndEvent(4, "k1", 4))
	if got := committedPositions(t, ro); !slices.Equal(got, posRange(1, 4)) {
		t.Fatalf("committed %v after a turn end, want 1-4", got)
	}
	if n := clock.Pending(); n != 0 {
		t.Fatalf("%d timers wait with nothing to commit", n)
	}
}

// TestCommitDelayBounds: under a flood, what waits is committed once the
// count bound is reached, without waiting for the delay.
func TestCommitDelayBounds(t *testing.T) {
	db, ro, _, _ := openDelayed(t)
	pos, last := uint64(0), map[string]uint64{}
	for pos < maxPendingRows {
		mustAppend(t, db, flood(64, &pos, []string{"k1"}, last)...)
	}
	if got := committedPositions(t, ro); len(got) != maxPendingRows {
		t.Fatalf("committed %d of %d events with the clock stopped", len(got), maxPendingRows)
	}
}

// TestCommitDelayReadsSeeWaiting: the DB's own reads and writes see every
// appended event, committed or waiting, and in order: a session deleted
// after its events were appended stays deleted.
func TestCommitDelayReadsSeeWaiting(t *testing.T) {
	ctx := context.Background()
	db, ro, clock, _ := openDelayed(t)
	mustAppend(t, db, textEvent(1, "k1", 1), textEvent(2, "k2", 1))
	if got := positions(mustRead(t, db, bridge.EventQuery{})); !slices.Equal(got, []uint64{1, 2}) {
		t.Fatalf("ReadEvents = %v, want 1 2", got)
	}
	mustAppend(t, db, textEvent(3, "k1", 2))
	if p, err := db.LastPos(ctx); err != nil || p != 3 {
		t.Fatalf("LastPos = %d, %v; want 3", p, err)
	}
	mustAppend(t, db, textEvent(4, "k1", 3))
	if rec, ok, err := db.LoadSession(ctx, "k1"); err != nil || !ok || rec.Key != "k1" {
		t.Fatalf("LoadSession(k1) = %+v, %v, %v", rec, ok, err)
	}
	mustAppend(t, db, textEvent(5, "k2", 2))
	if err := db.DeleteSession(ctx, "k2"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(testDelay)
	if err := db.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := committedPositions(t, ro); !slices.Equal(got, []uint64{1, 3, 4}) {
		t.Fatalf("committed %v, want 1 3 4 (k2 deleted)", got)
	}
}

// TestCommitDelayCloseCommits: what waits survives Close.
func TestCommitDelayCloseCommits(t *testing.T) {
	db, _, _, path := openDelayed(t)
	mustAppend(t, db, textEvent(1, "k1", 1), textEvent(2, "k1", 2))
	mustAppend(t, db, textEvent(3, "k1", 3))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := committedPositions(t, openReadOnly(t, path)); !slices.Equal(got, posRange(1, 3)) {
		t.Fatalf("after Close the file holds %v, want 1-3", got)
	}
}

// TestCommitDelayFailedAppendWithdraws: an Append whose commit fails
// leaves none of its events behind, so the caller's retry (what a Host
// does) neither duplicates them nor blocks every later commit; what waited
// before it is committed with the next batch.
func TestCommitDelayFailedAppendWithdraws(t *testing.T) {
	db, ro, _, _ := openDelayed(t)
	mustAppend(t, db, textEvent(1, "k1", 1), textEvent(2, "k1", 2))
	dup := textEvent(2, "k1", 2) // a Pos already waiting: the commit fails
	if err := db.Append(context.Background(), []bridge.Event{dup, turnEndEvent(3, "k1", 3)}); err == nil {
		t.Fatal("Append of a duplicate Pos succeeded")
	}
	if got := committedPositions(t, ro); len(got) != 0 {
		t.Fatalf("a failed commit left %v", got)
	}
	mustAppend(t, db, textEvent(3, "k1", 3), turnEndEvent(4, "k1", 4))
	if got := committedPositions(t, ro); !slices.Equal(got, posRange(1, 4)) {
		t.Fatalf("committed %v, want 1-4", got)
	}
}

// TestCommitDelayAppendAfterClose fails as without a delay.
func TestCommitDelayAppendAfterClose(t *testing.T) {
	db, _, _, _ := openDelayed(t)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	err := db.Append(context.Background(), []bridge.Event{textEvent(1, "k1", 1)})
	if err == nil || errors.Is(err, ErrNoPos) {
		t.Fatalf("Append after Close = %v, want a closed-database error", err)
	}
}
