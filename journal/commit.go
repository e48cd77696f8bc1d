package journal

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/acphost/acphost/bridge"
)

// Bounds of what waits for a delayed commit (Options.CommitDelay): a flood
// commits at least every so many events or bytes of them, so what waits
// holds bounded memory and a commit stays short.
const (
	maxPendingRows  = 4096
	maxPendingBytes = 4 << 20
)

// pendingCommits holds the events Append accepted that wait to be
// committed in one transaction with later ones (Options.CommitDelay).
// Under a flood a Host appends many small batches, and a transaction's
// cost is mostly its own (the pages it rewrites, the write-ahead log's
// frames), not its rows': grouping them is what makes a journaled flood
// cheap.
type pendingCommits struct {
	db    *DB
	clock bridge.Clock
	delay time.Duration
	log   *slog.Logger

	mu     sync.Mutex
	rows   []eventRow
	bytes  int            // of the rows' documents
	timer  bridge.Timer   // armed while rows wait; nil otherwise
	gen    uint64         // names the armed timer, so a stale one does nothing
	fired  sync.WaitGroup // timer calls armed or running: close waits for them
	closed bool
}

// add accepts rows: committed with what waits when one ends a turn or the
// bounds are reached, else left for the timer. On a failed commit the
// caller's rows are withdrawn (it may append them again), and what waited
// before them waits for the next attempt.
func (p *pendingCommits) add(ctx context.Context, rows []eventRow) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return p.db.commitRows(ctx, rows) // fails as any write after Close does
	}
	held, heldBytes := len(p.rows), p.bytes
	ends := false
	for _, r := range rows {
		p.bytes += len(r.doc)
		ends = ends || r.ends
	}
	p.rows = append(p.rows, rows...)
	var err error
	if ends || len(p.rows) >= maxPendingRows || p.bytes >= maxPendingBytes {
		if err = p.commitLocked(ctx); err != nil {
			clear(p.rows[held:])
			p.rows, p.bytes = p.rows[:held], heldBytes
		}
	}
	p.arm()
	return err
}

// commitLocked commits every waiting row in one transaction.
func (p *pendingCommits) commitLocked(ctx context.Context) error {
	p.disarm()
	if len(p.rows) == 0 {
		return nil
	}
	if err := p.db.commitRows(ctx, p.rows); err != nil {
		return err
	}
	clear(p.rows)
	p.rows, p.bytes = p.rows[:0], 0
	return nil
}

// arm starts the timer that commits the waiting rows, unless it runs.
func (p *pendingCommits) arm() {
	if p.timer != nil || len(p.rows) == 0 || p.closed {
		return
	}
	p.gen++
	gen := p.gen
	p.fired.Add(1)
	p.timer = p.clock.AfterFunc(p.delay, func() { p.fire(gen) })
}

// disarm stops the timer; one that already fired finds itself stale.
func (p *pendingCommits) disarm() {
	if p.timer == nil {
		return
	}
	if p.timer.Stop() {
		p.fired.Done()
	}
	p.timer = nil
	p.gen++
}

// fire is the timer's call: it commits what waits, and on failure logs and
// tries again a delay later.
func (p *pendingCommits) fire(gen uint64) {
	defer p.fired.Done()
	p.mu.Lock()
	defer p.mu.Unlock()
	if gen != p.gen || p.closed {
		return
	}
	p.timer = nil
	if err := p.commitLocked(context.Background()); err != nil {
		p.log.Error("journal: a delayed commit failed; trying again", "err", err, "events", len(p.rows))
		p.arm()
	}
}

// flush commits what waits.
func (p *pendingCommits) flush(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.commitLocked(ctx)
}

// close commits what waits and stops the timer for good; it returns once
// no timer call runs.
func (p *pendingCommits) close(ctx context.Context) error {
	p.mu.Lock()
	err := p.commitLocked(ctx)
	lost := len(p.rows)
	p.disarm()
	p.closed = true
	p.mu.Unlock()
	p.fired.Wait()
	if err != nil {
		return fmt.Errorf("committing the last %d events: %w", lost, err)
	}
	return nil
}

// Flush commits the events Append left waiting for a delayed commit
// (Options.CommitDelay); without a delay there are none and it returns at
// once. Once it returns nil, every event appended before it survives a
// crash of the process.
func (db *DB) Flush(ctx context.Context) error {
	if db.commits == nil {
		return nil
	}
	if err := db.commits.flush(ctx); err != nil {
		return fmt.Errorf("journal: committing waiting events: %w", err)
	}
	return nil
}
