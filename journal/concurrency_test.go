package journal

import (
	"context"
	"sync"
	"testing"

	"github.com/acphost/acphost/bridge"
)

// TestConcurrentReadsDuringAppend reads while batches commit: readers
// tailing the journal see whole batches without a gap, and the counters
// never go back.
func TestConcurrentReadsDuringAppend(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	const batches, batchSize = 40, 10
	keys := []string{"k1", "k2", "k3", ""}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		pos, last := uint64(0), map[string]uint64{}
		for range batches {
			if err := db.Append(ctx, flood(batchSize, &pos, keys, last)); err != nil {
				t.Errorf("Append: %v", err)
				return
			}
		}
	})
	for r := range 3 {
		wg.Go(func() { readWhileAppending(t, db, done, keys[r], batchSize) })
	}
	wg.Wait()
	if got := mustRead(t, db, bridge.EventQuery{Limit: batches * batchSize}); len(got) != batches*batchSize {
		t.Fatalf("read %d events at the end, want %d", len(got), batches*batchSize)
	}
}

func readWhileAppending(t *testing.T, db *DB, done <-chan struct{}, key string, batchSize int) {
	ctx := context.Background()
	var cursor, lastPos, lastSeq uint64
	for {
		select {
		case <-done:
			return
		default:
		}
		// A tail, as a subscriber catching up reads it.
		events, err := db.ReadEvents(ctx, bridge.EventQuery{After: cursor, Limit: 1 << 20})
		if err != nil {
			t.Errorf("ReadEvents: %v", err)
			return
		}
		if len(events)%batchSize != 0 {
			t.Errorf("a reader saw %d events after %d: part of a batch", len(events), cursor)
		}
		for _, ev := range events {
			if ev.Pos != cursor+1 {
				t.Errorf("a reader saw Pos %d after %d", ev.Pos, cursor)
				return
			}
			cursor = ev.Pos
		}
		pos, err := db.LastPos(ctx)
		if err != nil || pos < lastPos || pos < cursor {
			t.Errorf("LastPos = %d, %v after %d, with Pos %d read", pos, err, lastPos, cursor)
		}
		seq, err := db.LastSeq(ctx, key)
		if err != nil || seq < lastSeq {
			t.Errorf("LastSeq(%q) = %d, %v after %d", key, seq, err, lastSeq)
		}
		lastPos, lastSeq = pos, seq
		if _, err := db.Sessions(ctx); err != nil {
			t.Errorf("Sessions: %v", err)
		}
	}
}
