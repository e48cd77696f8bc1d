package bridge

import (
	"slices"
	"time"

	"github.com/acphost/acphost/acpclient"
)

// routeRun hands a run of updates received at now to their sessions, in
// the agent's order. Consecutive text deltas of one session, the bulk of a
// streaming agent's output, go together through emitDeltas: one session
// look-up, one session lock and one queue lock for all of them, where each
// alone would take all three. Called with routeMu held.
func (b *Bridge) routeRun(ns []*acpclient.SessionNotification, now time.Time) {
	for i := 0; i < len(ns); {
		ds, j := b.deltaScratch[:0], i
		for j < len(ns) && ns[j].SessionID == ns[i].SessionID {
			d, ok := deltaOf(ns[j])
			if !ok {
				break
			}
			ds, j = append(ds, d), j+1
		}
		if j-i <= 1 { // not a delta, or a lone one
			b.route(ns[i], now)
			j = i + 1
		} else if s := b.session(ns[i].SessionID); s != nil {
			s.emitDeltas(ds, now)
		} else {
			for _, n := range ns[i:j] {
				b.route(n, now) // held until the session is known
			}
		}
		clear(ds)
		b.deltaScratch = ds
		i = j
	}
}

// routeDeltas hands a run of text deltas received at now to their
// sessions, in the agent's order, as routeRun does. A delta for a session
// not known yet is held as the notification it stands for. Called with
// routeMu held.
func (b *Bridge) routeDeltas(ds []acpclient.TextDelta, now time.Time) {
	for i := 0; i < len(ds); {
		j := i + 1
		for j < len(ds) && ds[j].SessionID == ds[i].SessionID {
			j++
		}
		if s := b.session(ds[i].SessionID); s != nil {
			s.emitDeltas(ds[i:j], now)
		} else {
			for k := i; k < j; k++ {
				b.route(ds[k].Notification(), now) // held until the session is known
			}
		}
		i = j
	}
}

// deltaOf returns a text delta (a text chunk of the agent's message, its
// thoughts or a user message) as the TextDelta it is, for emitDeltas; ok is
// false for any other update. A chunk's _meta is not carried, as no
// delta event carries it.
func deltaOf(n *acpclient.SessionNotification) (d acpclient.TextDelta, ok bool) {
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

// deltaKind is the event kind of a text delta of the given update kind.
func deltaKind(updateKind string) Kind {
	switch updateKind {
	case acpclient.UpdateAgentThoughtChunk:
		return KindThinking
	case acpclient.UpdateUserMessageChunk:
		return KindUserText
	}
	return KindText
}

// emitDeltas reports text deltas of this session received at now, as
// emitChunk and emitFromAgentAt would one by one: the session's state is
// read once for all of them, which is what one by one would see too, since
// no other message of the agent comes between them.
func (s *Session) emitDeltas(ds []acpclient.TextDelta, now time.Time) {
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
func withoutEmpty(ds []acpclient.TextDelta) []acpclient.TextDelta {
	i := slices.IndexFunc(ds, func(d acpclient.TextDelta) bool { return d.Text == "" })
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
