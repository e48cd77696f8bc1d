package acpclient

import "github.com/acphost/acphost/internal/wire"

// deltaEntry is a queue entry carrying a text delta. No client ever holds
// one (a wire.Receiver gets copies), so entries are reused once handed on
// (deltaBoxes).
type deltaEntry struct {
	in inbound // first, so the entry's address is the box's (boxPool.keep)
	d  wire.TextDelta
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

// leanDelta reports whether the line s matched is a text delta: a text
// block and no _meta but the chunk's (the others a delta would lose).
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
