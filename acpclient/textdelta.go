package acpclient

import (
	"context"
	"encoding/json"
)

// TextDelta is one streamed piece of text: a session/update whose update is
// an agent_message_chunk, agent_thought_chunk or user_message_chunk
// carrying a text content block, and nothing else (no annotations, no
// _meta on the notification or the block; the chunk's own _meta is Meta).
// It is what a TextDeltaHandler gets instead of the notification, because
// it is all such a notification says.
type TextDelta struct {
	SessionID string
	// Kind is UpdateAgentMessageChunk, UpdateAgentThoughtChunk or
	// UpdateUserMessageChunk.
	Kind string
	// MessageID is the chunk's message id, or "" when it has none.
	MessageID    string
	HasMessageID bool
	Text         string
	// Meta is the chunk's _meta (ContentChunk.Meta), raw, or nil.
	Meta json.RawMessage
}

// TextDeltaHandler is an optional interface of a Client that takes the
// text chunks of a streaming agent lean: every session/update that is a
// TextDelta reaches TextDeltas instead of SessionUpdate or SessionUpdates,
// in runs of those that came back to back, and in the agent's order with
// every other message. A streamed chunk so costs a few strings instead of
// a notification (a SessionNotification with its update is over half a
// kilobyte), which is most of what reading a flood of them costs. ds is
// the Conn's to reuse once the call returns; the strings in it stay valid.
// A panic in TextDeltas is logged like one in SessionUpdate, and the rest
// of that run is not delivered.
type TextDeltaHandler interface {
	TextDeltas(ctx context.Context, ds []TextDelta)
}

// Notification returns the session/update notification d stands for, for
// a client that handles a delta as the other updates (holding it until
// its session is known, say).
func (d *TextDelta) Notification() *SessionNotification {
	c := ContentChunk{Content: TextBlock(d.Text), Meta: d.Meta}
	if d.HasMessageID {
		id := d.MessageID
		c.MessageID = &id
	}
	u := chunkUpdate(d.Kind, c)
	if u == nil { // a Kind the Conn never sets
		u = &AgentMessageChunk{c}
	}
	return &SessionNotification{SessionID: d.SessionID, Update: u}
}

// deltaEntry is a queue entry carrying a TextDelta. No client ever holds
// one (TextDeltas gets copies), so entries are reused once handed on
// (deltaBoxes).
type deltaEntry struct {
	in inbound // first, so the entry's address is the box's (boxPool.keep)
	d  TextDelta
}

// newDelta returns an empty queue entry for a text delta.
func (d *chunkDecoder) newDelta() *inbound {
	if d.deltas == nil {
		d.deltas = &deltaBoxes{kind: inDeltaEntry}
	}
	e := d.deltas.get()
	e.in.method, e.in.delta, e.in.boxed = methodSessionUpdate, &e.d, inDeltaEntry
	return &e.in
}

// leanDelta reports whether the line s matched is a TextDelta: a text
// block and no _meta but the chunk's (the others a TextDelta would lose).
func (s *chunkScan) leanDelta() bool {
	return s.ctype == ContentText && !s.fallback && !s.hasContentMeta && !s.hasParamsMeta
}

// buildDelta makes the queue entry of a text delta from the extracted
// spans: the text copied into the arena, decoded when it has escapes, and
// the session and message ids shared with the chunk before when they are
// the same.
func (s *chunkScan) buildDelta(d *chunkDecoder) *inbound {
	in := d.newDelta()
	td := in.delta
	td.Kind = s.kind
	if s.hasText {
		td.Text = s.arenaString(s.text, noIntern)
	}
	if s.hasSessionID {
		td.SessionID = s.arenaString(s.sessionID, internSessionID)
	}
	if s.hasMsgID {
		td.MessageID, td.HasMessageID = s.arenaString(s.messageID, internMessageID), true
	}
	if s.hasUpdateMeta {
		td.Meta = s.keep(s.b[s.updateMeta.start:s.updateMeta.end])
	}
	in.size = queuedSize(len(s.b), false)
	return in
}
