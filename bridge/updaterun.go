package bridge

import (
	"slices"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/internal/wire"
)

// routeRun hands a run of updates received at now to their sessions, in
// the agent's order: the one routing path of updates. Consecutive text
// deltas of one session, the bulk of a streaming agent's output, go
// together through emitDeltas: one session look-up, one session lock and
// one queue lock for all of them, where each alone would take all three. A
// delta for a session not known yet is held as the notification it stands
// for. Called with routeMu held.
func (b *Bridge) routeRun(run []runUpdate, now time.Time) {
	for i := 0; i < len(run); {
		sid := runSession(&run[i])
		ds, j := b.deltaScratch[:0], i
		for j < len(run) && runSession(&run[j]) == sid {
			d, ok := deltaOf(&run[j])
			if !ok {
				break
			}
			ds, j = append(ds, d), j+1
		}
		if j == i || (j-i == 1 && !run[i].IsDelta) { // not a delta, or a lone chunk
			b.route(&run[i], now)
			j = i + 1
		} else if s := b.session(sid); s != nil {
			s.emitDeltas(ds, now)
		} else {
			for k := i; k < j; k++ {
				u := runUpdate{Note: noteOf(&run[k]), Raw: run[k].Raw}
				b.route(&u, now) // held until the session is known
			}
		}
		clear(ds)
		b.deltaScratch = ds
		i = j
	}
}

// runSession is the session id of u.
func runSession(u *runUpdate) string {
	if u.IsDelta {
		return u.Delta.SessionID
	}
	return u.Note.SessionID
}

// noteOf returns u as a notification: a delta as the chunk it stands for.
func noteOf(u *runUpdate) *acpclient.SessionNotification {
	if !u.IsDelta {
		return u.Note
	}
	d := &u.Delta
	c := acpclient.ContentChunk{Content: acpclient.TextBlock(d.Text), Meta: d.Meta}
	if d.HasMessageID {
		id := d.MessageID
		c.MessageID = &id
	}
	var cu acpclient.SessionUpdate
	switch d.Kind {
	case acpclient.UpdateAgentThoughtChunk:
		cu = &acpclient.AgentThoughtChunk{ContentChunk: c}
	case acpclient.UpdateUserMessageChunk:
		cu = &acpclient.UserMessageChunk{ContentChunk: c}
	default:
		cu = &acpclient.AgentMessageChunk{ContentChunk: c}
	}
	return &acpclient.SessionNotification{SessionID: d.SessionID, Update: cu}
}

// deltaOf returns a text delta (a text chunk of the agent's message, its
// thoughts or a user message) as the wire.TextDelta it is, for emitDeltas;
// ok is false for any other update. A chunk's _meta is not carried, as no
// delta event carries it.
func deltaOf(u *runUpdate) (d wire.TextDelta, ok bool) {
	if u.IsDelta {
		return u.Delta, true
	}
	n := u.Note
	var c *acpclient.ContentChunk
	switch u := n.Update.(type) {
	case *acpclient.AgentMessageChunk:
		d.Kind, c = acpclient.UpdateAgentMessageChunk, &u.ContentChunk
	case *acpclient.AgentThoughtChunk:
		d.Kind, c = acpclient.UpdateAgentThoughtChunk, &u.ContentChunk
	case *acpclient.UserMessageChunk:
		d.Kind, c = acpclient.UpdateUserMessageChunk, &u.ContentChunk
	default:
		return d, false
	}
	if c.Content.Type != acpclient.ContentText {
		return d, false
	}
	d.SessionID, d.Text = n.SessionID, c.Content.Text
	if c.MessageID != nil {
		d.MessageID, d.HasMessageID = *c.MessageID, true
	}
	return d, true
}

// emitDeltas reports text deltas of this session received at now, as
// emitChunk and emitFromAgentAt would one by one: the session's state is
// read once for all of them, which is what one by one would see too, since
// no other message of the agent comes between them.
func (s *Session) emitDeltas(ds []wire.TextDelta, now time.Time) {
	tmpl := Event{Time: now}
	s.mu.Lock()
	if s.replaying && s.skipReplay { // deltas are all history
		s.replaySkipped += len(ds)
		s.mu.Unlock()
		return
	}
	tmpl.Replay = s.replaying
	tmpl.Late = s.turn == nil && s.turnsEnded > 0 && !s.replaying
	if tmpl.Late {
		tmpl.Turn = s.ctl.lastTurn // late updates belong to the turn that ended
	}
	if s.turn != nil {
		s.turn.watchdog.kick(now)
	}
	if ds = withoutEmpty(ds); len(ds) == 0 {
		s.mu.Unlock()
		return
	}
	if s.turn != nil {
		for i := range ds {
			if isOutput(deltaKind(ds[i].Kind)) {
				s.turn.emitted = true
				break
			}
		}
	}
	s.mu.Unlock()
	tmpl.Key, tmpl.Session, tmpl.Bridge = s.key, s.id, s.b.cfg.ID
	if tmpl.Turn == 0 {
		tmpl.Turn = s.curTurn.Load()
	}
	s.b.host.events.queue.pushDeltas(&tmpl, ds)
}

// withoutEmpty returns ds without its empty deltas, which say nothing (see
// emitChunk): ds itself when it has none, the common case.
func withoutEmpty(ds []wire.TextDelta) []wire.TextDelta {
	i := slices.IndexFunc(ds, func(d wire.TextDelta) bool { return d.Text == "" })
	if i < 0 {
		return ds
	}
	out := slices.Clone(ds[:i])
	for _, d := range ds[i+1:] {
		if d.Text != "" {
			out = append(out, d)
		}
	}
	return out
}

// route hands an update received at now to its session, or holds it until
// the session is known. Called with routeMu held.
func (b *Bridge) route(u *runUpdate, now time.Time) {
	n := u.Note
	b.mu.Lock()
	s := b.sessions[n.SessionID]
	if s == nil {
		err := b.holdEarlyLocked(u)
		b.mu.Unlock()
		if err != nil {
			b.reportEarlyDrop(err)
		}
		return
	}
	b.mu.Unlock()
	s.handleUpdate(n, u.Raw, now)
}
