package bridge

import (
	"container/list"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/acphost/acphost/acpclient"
)

// Defaults of EarlyUpdateLimits.
const (
	// defaultEarlyUpdates is how many updates for unknown sessions a Bridge
	// holds at most. Agents send a handful before session/new answers
	// (commands, modes, config); a thousand leaves room for chatty ones.
	defaultEarlyUpdates = 1000
	// defaultEarlyUpdateBytes is how much memory (as notificationSize
	// estimates it) those updates may take, in all.
	defaultEarlyUpdateBytes = 8 << 20
	// defaultEarlyUpdateTTL is how long an update for an unknown session is
	// kept once no session/new or session/load is in flight.
	defaultEarlyUpdateTTL = 10 * time.Second
)

// ErrEarlyUpdatesDropped is the Err of the error event that reports updates
// for a session id no session claimed, dropped because the buffer for them
// was full or because they waited too long.
var ErrEarlyUpdatesDropped = errors.New("bridge: updates for an unknown session dropped")

// EarlyUpdateLimits bounds the updates a Bridge holds for session ids it does
// not know yet. Agents send updates for a session before session/new has
// told us its id; those are held and delivered to the session when it
// registers. An agent that sends updates for an id that never becomes a
// session must not cost unbounded memory, so the buffer is capped per Bridge
// in count and bytes (the oldest updates go first), and what no session
// claims within TTL is purged. Zero fields take the defaults.
//
// Age is measured from the later of an update's arrival and the end of the
// last session/new or session/load, and nothing is purged by age while one is
// in flight: a slow session/new (an agent starting its MCP servers, a
// sign-in) does not lose the updates it sent first. A session/load's replay
// never counts here: the id is known beforehand and the session is
// registered before the call, so its history reaches it whatever its size.
//
// The first drop is reported once per Bridge, as an error event (agent-wide,
// Err wrapping ErrEarlyUpdatesDropped): losing agent output is a failure
// the app should be able to tell apart from a notice, yet it never ends a
// turn or the process. Later drops are only counted, and logged at Close.
type EarlyUpdateLimits struct {
	// MaxUpdates caps the number of held updates (default 1000).
	MaxUpdates int
	// MaxBytes caps their estimated memory (default 8 MiB); a single
	// update larger than this is dropped on arrival.
	MaxBytes int64
	// TTL is how long an unclaimed update is kept (default 10 seconds).
	TTL time.Duration
}

func (l EarlyUpdateLimits) withDefaults() EarlyUpdateLimits {
	if l.MaxUpdates <= 0 {
		l.MaxUpdates = defaultEarlyUpdates
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = defaultEarlyUpdateBytes
	}
	if l.TTL <= 0 {
		l.TTL = defaultEarlyUpdateTTL
	}
	return l
}

// earlyUpdate is one held notification.
type earlyUpdate struct {
	n    *acpclient.SessionNotification
	raw  json.RawMessage // the update as sent, for its event's Raw
	size int64
	at   time.Time
}

// earlyBuffer holds updates for unknown session ids, oldest first. It is
// guarded by Bridge.mu.
type earlyBuffer struct {
	limits EarlyUpdateLimits
	order  list.List                  // of *earlyUpdate, oldest first, over all ids
	byID   map[string][]*list.Element // each id's updates, oldest first
	bytes  int64

	opening   int       // session/new and session/load calls in flight
	openEnded time.Time // when the last of them ended

	// dropped counts what was dropped; reported says whether the first
	// drop has been reported.
	droppedUpdates int
	droppedBytes   int64
	reported       bool
}

// Why early updates were dropped.
const (
	dropFull      = iota // the caps were reached
	dropExpired          // no session claimed them in time
	dropOversized        // one update is larger than the byte cap
)

// earlyDrop describes updates dropped by one buffer operation.
type earlyDrop struct {
	updates int
	bytes   int64
	session string // the id of the first update dropped
	reason  int    // why the first was dropped
}

func (d *earlyDrop) add(u *earlyUpdate, reason int) {
	if d.updates == 0 {
		d.session, d.reason = u.n.SessionID, reason
	}
	d.updates++
	d.bytes += u.size
}

func newEarlyBuffer(limits EarlyUpdateLimits) *earlyBuffer {
	return &earlyBuffer{limits: limits.withDefaults(), byID: map[string][]*list.Element{}}
}

// add holds n, first purging what expired, then evicting the oldest updates
// until the caps hold again.
func (e *earlyBuffer) add(n *acpclient.SessionNotification, raw json.RawMessage, now time.Time) earlyDrop {
	var drop earlyDrop
	e.purgeExpired(now, &drop)
	u := &earlyUpdate{n: n, raw: raw, size: notificationSize(n) + int64(len(raw)), at: now}
	if u.size > e.limits.MaxBytes {
		drop.add(u, dropOversized)
		e.count(drop)
		return drop
	}
	e.byID[n.SessionID] = append(e.byID[n.SessionID], e.order.PushBack(u))
	e.bytes += u.size
	for e.order.Len() > e.limits.MaxUpdates || e.bytes > e.limits.MaxBytes {
		drop.add(e.removeOldest(), dropFull)
	}
	e.count(drop)
	return drop
}

// claim removes and returns the updates held for id, oldest first.
func (e *earlyBuffer) claim(id string) []runUpdate {
	elems := e.byID[id]
	delete(e.byID, id)
	out := make([]runUpdate, 0, len(elems))
	for _, el := range elems {
		u := e.order.Remove(el).(*earlyUpdate)
		e.bytes -= u.size
		out = append(out, runUpdate{Note: u.n, Raw: u.raw})
	}
	return out
}

// purgeExpired drops the updates older than the TTL, unless a session/new
// or session/load is in flight (it may still claim them).
func (e *earlyBuffer) purgeExpired(now time.Time, drop *earlyDrop) {
	if e.opening > 0 {
		return
	}
	for el := e.order.Front(); el != nil; el = e.order.Front() {
		if now.Sub(e.since(el.Value.(*earlyUpdate))) < e.limits.TTL {
			break
		}
		drop.add(e.removeOldest(), dropExpired)
	}
}

// since is when u's age starts: its arrival, or the end of the last open
// call when that came later.
func (e *earlyBuffer) since(u *earlyUpdate) time.Time {
	if e.openEnded.After(u.at) {
		return e.openEnded
	}
	return u.at
}

// nextExpiry returns how long until the oldest update expires, and false
// when nothing can expire (empty, or an open call in flight).
func (e *earlyBuffer) nextExpiry(now time.Time) (time.Duration, bool) {
	front := e.order.Front()
	if front == nil || e.opening > 0 {
		return 0, false
	}
	return max(e.limits.TTL-now.Sub(e.since(front.Value.(*earlyUpdate))), 0), true
}

func (e *earlyBuffer) removeOldest() *earlyUpdate {
	u := e.order.Remove(e.order.Front()).(*earlyUpdate)
	id := u.n.SessionID
	if rest := e.byID[id][1:]; len(rest) > 0 {
		e.byID[id] = rest
	} else {
		delete(e.byID, id)
	}
	e.bytes -= u.size
	return u
}

func (e *earlyBuffer) count(d earlyDrop) {
	e.droppedUpdates += d.updates
	e.droppedBytes += d.bytes
}

// report returns the error for the first drop of the bridge's life, once.
func (e *earlyBuffer) report(d earlyDrop) error {
	if d.updates == 0 || e.reported {
		return nil
	}
	e.reported = true
	var why string
	switch d.reason {
	case dropFull:
		why = fmt.Sprintf("the buffer for sessions not yet open is full (%d updates, %d bytes)", e.limits.MaxUpdates, e.limits.MaxBytes)
	case dropExpired:
		why = fmt.Sprintf("no session claimed them within %v", e.limits.TTL)
	case dropOversized:
		why = fmt.Sprintf("an update is larger than the whole buffer for sessions not yet open (%d bytes)", e.limits.MaxBytes)
	}
	return fmt.Errorf("%w: %d update(s), ~%d bytes, for session %q: %s (later drops are not reported)",
		ErrEarlyUpdatesDropped, d.updates, d.bytes, d.session, why)
}

// clear forgets every held update (the bridge closed).
func (e *earlyBuffer) clear() {
	e.order.Init()
	e.byID = map[string][]*list.Element{}
	e.bytes = 0
}
