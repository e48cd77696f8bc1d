package journal

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/acphost/acphost/bridge"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// openTest opens a journal in a fresh temporary directory, closed when the
// test ends.
func openTest(t testing.TB) *DB {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "journal.db"))
}

func openAt(t testing.TB, path string) *DB {
	t.Helper()
	db, err := Open(context.Background(), path, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// baseTime is the time of the first test event; event n is n ms later.
var baseTime = time.Date(2026, 12, 1, 9, 0, 0, 123456789, time.UTC)

// textEvent is a text delta of session key (native id "n-"+key, bridge
// "b") at pos with seq.
func textEvent(pos uint64, key string, seq uint64) bridge.Event {
	ev := bridge.Event{Pos: pos, Bridge: "b", Key: key, Seq: seq, Turn: 1, Kind: bridge.KindText,
		Time: baseTime.Add(time.Duration(pos) * time.Millisecond), Text: fmt.Sprintf("chunk %d", pos), MessageID: "m1"}
	if key != "" {
		ev.Session = "n-" + key
	}
	return ev
}

// flood numbers n text events round-robin over keys, continuing after
// pos and the keys' seqs in last (updated in place).
func flood(n int, pos *uint64, keys []string, last map[string]uint64) []bridge.Event {
	events := make([]bridge.Event, 0, n)
	for i := range n {
		key := keys[i%len(keys)]
		*pos++
		last[key]++
		events = append(events, textEvent(*pos, key, last[key]))
	}
	return events
}

func mustAppend(t testing.TB, db *DB, events ...bridge.Event) {
	t.Helper()
	if err := db.Append(context.Background(), events); err != nil {
		t.Fatalf("Append: %v", err)
	}
}

func mustRead(t testing.TB, db *DB, q bridge.EventQuery) []bridge.Event {
	t.Helper()
	events, err := db.ReadEvents(context.Background(), q)
	if err != nil {
		t.Fatalf("ReadEvents(%+v): %v", q, err)
	}
	return events
}

// positions lists the Pos of events.
func positions(events []bridge.Event) []uint64 {
	out := make([]uint64, len(events))
	for i, ev := range events {
		out[i] = ev.Pos
	}
	return out
}

// posRange is from..to inclusive.
func posRange(from, to uint64) []uint64 {
	var out []uint64
	for p := from; p <= to; p++ {
		out = append(out, p)
	}
	return out
}
