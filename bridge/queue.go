package bridge

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/acphost/acphost/acpclient"
)

// This file is a session's prompt queue: prompts an app sends while a turn
// runs, kept in order and run as turns of their own when the session is
// free, visible, editable and journaled.

// Errors of the prompt queue.
var (
	// ErrQueueFull: the session's queue holds SessionConfig.QueueLimit
	// prompts already.
	ErrQueueFull = errors.New("bridge: the prompt queue is full")
	// ErrNotQueued: no prompt with that id waits in the queue (it may have
	// started, or been removed).
	ErrNotQueued = errors.New("bridge: no such queued prompt")
)

// defaultQueueLimit is SessionConfig.QueueLimit's zero value.
const defaultQueueLimit = 32

// Enqueue queues a prompt to run as a turn of its own once the session is
// free: at once when no turn runs, else after the running turn and the
// prompts queued before it, in order. It returns the queued prompt's id.
// A queue event reports it, and every later change (started, removed,
// moved, paused); the queue is in the SessionView (Host.Snapshot) and in
// the session's record, so a session resumed after an app restart has it
// back, paused: nothing runs until ResumeQueue.
//
// A turn that ends in an error or a refusal pauses a queue that holds
// prompts, rather than sending them into a broken session. Cancel ends the
// running turn and keeps the queue, whose next prompt then runs; call
// ClearQueue first to drop it as well. Close drops the queue.
//
// Past SessionConfig.QueueLimit prompts (32 by default) Enqueue fails
// with ErrQueueFull. Prompt stays as it was: it fails with ErrBusy while
// a turn runs, so the app chooses per call whether to queue.
//
// Enqueue does not wait, so ctx does not bound the queued turn; it
// carries the prompt's _meta (see WithPromptMeta), which the queued
// prompt keeps (QueuedPrompt.Meta) until its turn sends it.
func (s *Session) Enqueue(ctx context.Context, content ...acpclient.ContentBlock) (string, error) {
	if err := s.closedErr(); err != nil {
		return "", err
	}
	if len(content) == 0 {
		return "", fmt.Errorf("bridge %s: session %s: queueing an empty prompt", s.b.cfg.ID, s.key)
	}
	meta := promptMeta(ctx)
	if err := checkPromptMeta(meta); err != nil {
		return "", fmt.Errorf("bridge %s: session %s: %w", s.b.cfg.ID, s.key, err)
	}
	p := QueuedPrompt{ID: newQueuedID(), Content: slices.Clone(content), Text: promptText(content), Queued: s.b.clock.Now(), Meta: meta}
	if err := s.queue.insert(p, -1); err != nil {
		return "", err
	}
	s.queue.kick()
	return p.ID, nil
}

// Queue returns the prompts waiting in the session's queue, first to run
// first, and whether the queue is paused (see ResumeQueue).
func (s *Session) Queue() (prompts []QueuedPrompt, paused bool) {
	q := &s.queue
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.listLocked(), q.paused
}

// RemoveQueued removes a prompt from the queue before it runs. A prompt
// that has started is a turn: cancel it with Cancel; one whose turn is
// beginning (first in Queue, about to be reported started) is no longer
// removed or moved (ErrNotQueued).
func (s *Session) RemoveQueued(id string) error {
	return s.queue.change(0, func(q *sessionQueue) (QueueUpdate, error) {
		i := q.indexLocked(id)
		if i < 0 {
			return QueueUpdate{}, fmt.Errorf("bridge %s: session %s: removing %q: %w", s.b.cfg.ID, s.key, id, ErrNotQueued)
		}
		q.items = slices.Delete(q.items, i, i+1)
		return QueueUpdate{Change: "removed", ID: id}, nil
	})
}

// MoveQueued moves a queued prompt to position index of the queue (0 runs
// next); an index past the end moves it last.
func (s *Session) MoveQueued(id string, index int) error {
	return s.queue.change(0, func(q *sessionQueue) (QueueUpdate, error) {
		i := q.indexLocked(id)
		if i < 0 {
			return QueueUpdate{}, fmt.Errorf("bridge %s: session %s: moving %q: %w", s.b.cfg.ID, s.key, id, ErrNotQueued)
		}
		p := q.items[i]
		q.items = slices.Delete(q.items, i, i+1)
		q.items = slices.Insert(q.items, min(max(index, 0), len(q.items)), p)
		return QueueUpdate{Change: "moved", ID: id}, nil
	})
}

// ClearQueue removes every queued prompt. To cancel the running turn and
// drop what is queued behind it, call ClearQueue, then Cancel.
func (s *Session) ClearQueue() {
	s.queue.change(0, func(q *sessionQueue) (QueueUpdate, error) {
		if len(q.items) == 0 {
			return QueueUpdate{}, nil
		}
		q.items = nil
		return QueueUpdate{Change: "cleared"}, nil
	})
}

// ResumeQueue lets a paused queue run again: its next prompt starts as
// soon as no turn runs. The queue pauses after a turn that ended in an
// error or a refusal, and a session resumed with a queued prompt opens
// with its queue paused; nothing runs unasked.
func (s *Session) ResumeQueue() error {
	if err := s.closedErr(); err != nil {
		return err
	}
	s.queue.resume()
	s.queue.kick()
	return nil
}

// newQueuedID returns a queued prompt's id.
func newQueuedID() string { return "q-" + strings.ToLower(rand.Text()[:12]) }

// change applies f to the queue under its lock and, when f reports a
// change, saves the record and emits a queue event with the queue after
// it (Event.Turn is turn, or the running turn when 0).
func (q *sessionQueue) change(turn uint64, f func(*sessionQueue) (QueueUpdate, error)) error {
	q.emitMu.Lock()
	defer q.emitMu.Unlock()
	q.mu.Lock()
	u, err := f(q)
	if err != nil || u.Change == "" {
		q.mu.Unlock()
		return err
	}
	u.Prompts, u.Paused = q.listLocked(), q.paused
	q.mu.Unlock()
	q.s.rec.saveProgress()
	q.s.emit(Event{Kind: KindQueue, Turn: turn, Queue: &u})
	return nil
}

// insert adds p at index (-1: last), within the session's limit.
func (q *sessionQueue) insert(p QueuedPrompt, index int) error {
	s := q.s
	return q.change(0, func(q *sessionQueue) (QueueUpdate, error) {
		if q.closed {
			return QueueUpdate{}, fmt.Errorf("session %s: %w", s.key, ErrSessionClosed)
		}
		limit := s.cfg.QueueLimit
		if limit <= 0 {
			limit = defaultQueueLimit
		}
		if len(q.items) >= limit {
			return QueueUpdate{}, fmt.Errorf("bridge %s: session %s: %d prompts queued (the limit): %w", s.b.cfg.ID, s.key, len(q.items), ErrQueueFull)
		}
		if index < 0 || index > len(q.items) {
			index = len(q.items)
		}
		q.items = slices.Insert(q.items, index, p)
		return QueueUpdate{Change: "queued", ID: p.ID}, nil
	})
}

func (q *sessionQueue) indexLocked(id string) int {
	return slices.IndexFunc(q.items, func(p QueuedPrompt) bool { return p.ID == id })
}

// resume unpauses the queue.
func (q *sessionQueue) resume() {
	q.change(0, func(q *sessionQueue) (QueueUpdate, error) {
		if !q.paused {
			return QueueUpdate{}, nil
		}
		q.paused = false
		return QueueUpdate{Change: "resumed"}, nil
	})
}

// pause stops the queue for reason, if it holds prompts; turn is the turn
// whose end paused it (0 for none).
func (q *sessionQueue) pause(turn uint64, reason string) {
	q.change(turn, func(q *sessionQueue) (QueueUpdate, error) {
		if q.paused || q.closed || len(q.items) == 0 {
			return QueueUpdate{}, nil
		}
		q.paused = true
		return QueueUpdate{Change: "paused", Reason: reason}, nil
	})
}

// turnEnded runs after every turn's turn_end: the queue's next prompt may
// start, unless the turn failed or the agent refused, which pauses it.
func (q *sessionQueue) turnEnded(turn uint64, stopReason string, err error) {
	switch {
	case err != nil:
		q.pause(turn, fmt.Sprintf("turn %d failed: %v", turn, err))
	case stopReason == acpclient.StopRefusal:
		q.pause(turn, fmt.Sprintf("the agent refused turn %d", turn))
	}
	q.mu.Lock()
	q.heard++
	q.mu.Unlock()
	q.kick()
}

// idle reports whether a queued prompt may start: no turn runs, and every
// turn that ended has been heard of, so its end has paused the queue if it
// must (the session takes the next prompt before turn_end is emitted).
func (q *sessionQueue) idle() bool {
	s := q.s
	s.mu.Lock()
	busy, ended := s.ctl.busy, s.turnsEnded
	s.mu.Unlock()
	q.mu.Lock()
	defer q.mu.Unlock()
	return !busy && ended == q.heard
}

// kick starts drain when the queue has a prompt to run; a drain that runs
// is told to look again.
func (q *sessionQueue) kick() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.running {
		q.rekick = true
		return
	}
	if q.closed || q.paused || len(q.items) == 0 {
		return
	}
	if q.ctx == nil {
		q.ctx, q.cancel = context.WithCancel(context.Background())
	}
	q.running = true
	q.wg.Add(1)
	go q.drain()
}

// drain runs the queued prompts one turn at a time until the queue is
// empty, paused or closed, or a turn the app started holds the session
// (whose end kicks the queue again).
func (q *sessionQueue) drain() {
	defer q.wg.Done()
	for {
		p, ok := q.take(q.idle())
		if !ok {
			return
		}
		began := false
		_, err := q.s.prompt(q.ctx, p.Content, p.Meta, func(turn uint64) {
			began = true
			q.change(turn, func(q *sessionQueue) (QueueUpdate, error) {
				q.inflight = nil
				return QueueUpdate{Change: "started", ID: p.ID}, nil
			})
		})
		if began {
			continue // turnEnded has paused the queue or kicked it
		}
		if !q.putBack(p, err) {
			return
		}
	}
}

// take removes the next prompt to run, or ends drain's run: also when the
// session is not idle, unless a turn has ended since drain last looked.
func (q *sessionQueue) take(idle bool) (QueuedPrompt, bool) {
	for {
		q.mu.Lock()
		if idle || !q.rekick {
			break
		}
		q.rekick = false
		q.mu.Unlock()
		idle = q.idle()
	}
	defer q.mu.Unlock()
	if q.closed || q.paused || len(q.items) == 0 || !idle {
		q.running = false
		return QueuedPrompt{}, false
	}
	p := q.items[0]
	q.items = slices.Delete(q.items, 0, 1)
	q.inflight, q.rekick = &p, false
	return p, true
}

// putBack returns a prompt whose turn could not begin to the head of the
// queue and says whether drain goes on: after ErrBusy only if a turn has
// ended meanwhile; after another failure the queue pauses, saying why.
func (q *sessionQueue) putBack(p QueuedPrompt, err error) bool {
	q.mu.Lock()
	q.inflight = nil
	if !q.dropped {
		q.items = slices.Insert(q.items, 0, p)
	}
	busy := errors.Is(err, ErrBusy)
	again := busy && q.rekick && !q.closed
	q.rekick = false
	q.running = again
	stop := q.closed || busy
	q.mu.Unlock()
	if !stop {
		q.pause(0, fmt.Sprintf("queued prompt %s could not start: %v", p.ID, err))
	}
	return again
}

// persisted is the queue as the record keeps it (see listLocked).
func (q *sessionQueue) persisted() []QueuedPrompt {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.listLocked()
}

// listLocked is the queue as the app sees it: a prompt whose turn is
// about to begin first (it is still queued until its turn has begun),
// then the others.
func (q *sessionQueue) listLocked() []QueuedPrompt {
	if q.inflight == nil {
		return slices.Clone(q.items)
	}
	return append([]QueuedPrompt{*q.inflight}, q.items...)
}

// restore takes the queue of the record a session resumes from, paused;
// the session is not shared yet.
func (q *sessionQueue) restore(prompts []QueuedPrompt) {
	q.items, q.paused = slices.Clone(prompts), len(prompts) > 0
}

// announceRestored reports a restored queue once the session is open.
func (q *sessionQueue) announceRestored() {
	q.change(0, func(q *sessionQueue) (QueueUpdate, error) {
		if len(q.items) == 0 {
			return QueueUpdate{}, nil
		}
		return QueueUpdate{Change: "restored", Reason: "queued before the session was resumed; ResumeQueue runs it"}, nil
	})
}

// close stops the queue as the session closes: no prompt starts any more
// and a queued turn's context is cancelled. With drop the queue is emptied
// (a dropped event lists nothing); without it, as when the bridge shuts
// down, the record keeps the queue for a later resume.
func (q *sessionQueue) close(drop bool) {
	q.change(0, func(q *sessionQueue) (QueueUpdate, error) {
		q.closed = true
		if q.cancel != nil {
			q.cancel()
		}
		if !drop {
			return QueueUpdate{}, nil
		}
		q.dropped = true
		had := len(q.items)
		q.items = nil
		if had == 0 {
			return QueueUpdate{}, nil
		}
		return QueueUpdate{Change: "dropped", Reason: fmt.Sprintf("the session was closed with %d prompts queued", had)}, nil
	})
}

// wait waits for drain to end, once close has stopped the queue.
func (q *sessionQueue) wait() { q.wg.Wait() }
