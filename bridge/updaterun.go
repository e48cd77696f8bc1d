package bridge

import (
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
		j := i + 1
		if _, _, ok := deltaOf(ns[i]); ok {
			for j < len(ns) && ns[j].SessionID == ns[i].SessionID {
				if _, _, ok := deltaOf(ns[j]); !ok {
					break
				}
				j++
			}
		}
		if j-i == 1 {
			b.route(ns[i], now)
		} else if s := b.session(ns[i].SessionID); s != nil {
			s.emitDeltas(ns[i:j], now)
		} else {
			for _, n := range ns[i:j] {
				b.route(n, now) // held until the session is known
			}
		}
		i = j
	}
}

// deltaOf returns the event kind and the chunk of a text delta (a text
// chunk of the agent's message, its thoughts or a user message), the
// updates emitDeltas takes; ok is false for any other update.
func deltaOf(n *acpclient.SessionNotification) (kind Kind, c *acpclient.ContentChunk, ok bool) {
	switch u := n.Update.(type) {
	case *acpclient.AgentMessageChunk:
		kind, c = KindText, &u.ContentChunk
	case *acpclient.AgentThoughtChunk:
		kind, c = KindThinking, &u.ContentChunk
	case *acpclient.UserMessageChunk:
		kind, c = KindUserText, &u.ContentChunk
	default:
		return "", nil, false
	}
	return kind, c, c.Content.Type == acpclient.ContentText
}

// emitDeltas reports text deltas of this session received at now, as
// emitChunk and emitFromAgentAt would one by one: the session's state is
// read once for all of them, which is what one by one would see too, since
// no other message of the agent comes between them.
func (s *Session) emitDeltas(ns []*acpclient.SessionNotification, now time.Time) {
	tmpl := Event{Time: now}
	s.mu.Lock()
	if s.replaying && s.skipReplay { // deltas are all history
		s.replaySkipped += len(ns)
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
		for _, n := range ns {
			if kind, _, _ := deltaOf(n); isOutput(kind) {
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
	s.b.host.events.queue.pushDeltas(&tmpl, ns)
}
