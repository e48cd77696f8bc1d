package bridge

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// seqKey names a numbering: a session key, or for agent-wide events (Key
// "") the bridge.
type seqKey struct{ key, bridge string }

func seqKeyOf(ev *Event) seqKey {
	if ev.Key != "" {
		return seqKey{key: ev.Key}
	}
	return seqKey{bridge: ev.Bridge}
}

// stream is a Host's event pipeline: the queue, then one pump goroutine
// that numbers each batch, journals it, publishes it to subscribers, folds
// it into the live views and finally hands each event to Host.Events.
type stream struct {
	queue   *eventQueue
	journal Journal // nil when off, or once its numbering could not be read
	logger  *slog.Logger
	hub     *hub
	views   *liveViews
	out     chan Event
	stop    chan struct{} // closed to drop what is left and end the pump
	stopper sync.Once
	pumped  chan struct{}
	ctx     context.Context // of journal calls; cancelled by abandon
	cancel  context.CancelFunc

	// Owned by the pump goroutine.
	pos         uint64
	posRead     bool
	seq         map[seqKey]uint64
	unjournaled []Event // events whose Append failed, retried with the next batch
	failing     bool    // in a streak of failed Appends
	lost        int     // events given up during the streak
}

func newStream(o HostOptions) *stream {
	ctx, cancel := context.WithCancel(context.Background())
	s := &stream{queue: newEventQueue(o.MaxPendingEvents, o.maxQueuedBytes()/2), journal: o.Journal, logger: o.Logger,
		hub: newHub(o.SubscriberTail, o.SubscriberTailBytes, o.Journal), views: newLiveViews(), out: make(chan Event),
		stop: make(chan struct{}), pumped: make(chan struct{}), ctx: ctx, cancel: cancel, seq: map[seqKey]uint64{}}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	go s.pump()
	return s
}

func (s *stream) push(ev Event) bool { return s.queue.pushPtr(&ev) }

// pushPtr is push for the hot path: ev is not kept.
func (s *stream) pushPtr(ev *Event) bool { return s.queue.pushPtr(ev) }

// pump runs the pipeline until the queue is closed and drained, or until
// abandon.
func (s *stream) pump() {
	defer close(s.pumped)
	defer s.cancel()
	defer s.hub.close()
	defer close(s.out)
	var buf []Event
	for {
		batch := s.queue.take(buf[:0], pumpBatch)
		if batch == nil {
			s.flushJournal()
			return
		}
		batch = s.number(batch)
		batch = s.append(batch)
		s.hub.publish(batch)
		s.views.apply(batch)
		for _, ev := range batch {
			select {
			case s.out <- ev:
			case <-s.stop:
				return
			}
		}
		clear(batch)
		buf = batch
	}
}

// number gives each event its Pos and Seq. With a journal, Pos continues
// after the journal's last one and each key's Seq after its last one; if
// the journal cannot say, it is not used for the rest of the Host's life
// (numbers would collide) and an error event says so.
func (s *stream) number(batch []Event) []Event {
	var lookupErr error
	if !s.posRead {
		s.posRead = true
		if s.journal != nil {
			if s.pos, lookupErr = s.journal.LastPos(s.ctx); lookupErr != nil {
				s.journal = nil
			}
		}
	}
	for i := range batch {
		k := seqKeyOf(&batch[i])
		n, seen := s.seq[k]
		if !seen && k.key != "" && s.journal != nil {
			var err error
			if n, err = s.journal.LastSeq(s.ctx, k.key); err != nil {
				n, lookupErr, s.journal = 0, err, nil
			}
		}
		s.seq[k] = n + 1
		s.pos++
		batch[i].Pos, batch[i].Seq = s.pos, n+1
	}
	if lookupErr != nil {
		s.logger.Error("bridge: journal numbering unreadable; events are no longer journaled", "err", lookupErr)
		batch = append(batch, s.hostError(fmt.Errorf("%w: reading its last positions: %w; events are no longer journaled", ErrJournal, lookupErr)))
	}
	return batch
}

// hostError returns a numbered agent-wide error event of the Host itself.
func (s *stream) hostError(err error) Event {
	ev := Event{Kind: KindError, Time: time.Now(), Err: err}
	k := seqKeyOf(&ev)
	s.seq[k]++
	s.pos++
	ev.Pos, ev.Seq = s.pos, s.seq[k]
	return ev
}

// append journals the batch. A failed Append does not hold delivery up:
// the events are kept (boundedly) and retried in front of the next batch,
// so a transient failure leaves no hole; the first failure of a streak is
// reported as an error event and logged, and the recovery is logged.
func (s *stream) append(batch []Event) []Event {
	if s.journal == nil {
		return batch
	}
	pending := batch
	if len(s.unjournaled) > 0 {
		s.unjournaled = append(s.unjournaled, batch...)
		pending = s.unjournaled
	}
	err := s.journal.Append(s.ctx, pending)
	if err == nil {
		if s.failing {
			s.logger.Info("bridge: journal recovered", "lost", s.lost)
			s.failing, s.lost = false, 0
		}
		clear(s.unjournaled)
		s.unjournaled = s.unjournaled[:0]
		return batch
	}
	if len(s.unjournaled) == 0 {
		s.unjournaled = append(s.unjournaled, batch...)
	}
	if !s.failing {
		s.failing = true
		s.logger.Error("bridge: journal append failed; delivering events anyway", "err", err)
		ev := s.hostError(fmt.Errorf("%w: storing events: %w", ErrJournal, err))
		s.unjournaled = append(s.unjournaled, ev)
		batch = append(batch, ev)
	}
	if over := len(s.unjournaled) - maxUnjournaled; over > 0 {
		kept := copy(s.unjournaled, s.unjournaled[over:])
		clear(s.unjournaled[kept:])
		s.unjournaled = s.unjournaled[:kept]
		s.lost += over
	}
	return batch
}

// flushJournal makes a last attempt to store what a failed Append left.
func (s *stream) flushJournal() {
	if s.journal == nil || len(s.unjournaled) == 0 {
		return
	}
	if err := s.journal.Append(s.ctx, s.unjournaled); err != nil {
		s.logger.Error("bridge: journal append failed at shutdown", "err", err, "lost", s.lost+len(s.unjournaled))
	}
	s.unjournaled = nil
}

// close stops accepting events; the pump delivers what is queued, then
// closes the output channel.
func (s *stream) close() { s.queue.close() }

// abandon drops undelivered events and ends the pump.
func (s *stream) abandon() {
	s.queue.close()
	s.stopper.Do(func() {
		close(s.stop)
		s.cancel()
	})
	<-s.pumped
}

// done closes once the pump has ended.
func (s *stream) done() <-chan struct{} { return s.pumped }
