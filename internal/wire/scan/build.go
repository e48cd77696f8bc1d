package scan

import (
	"bytes"
	"encoding/json"
	"unsafe"
)

// build fills c from the extracted spans. Its strings are taken in the
// cheapest of three ways:
//
//   - referring into the line itself when owned (the caller's to keep,
//     never overwritten);
//   - for a line that matched a shape (s.shape) with plain strings, each
//     string copied alone out of the read buffer, and a session or message
//     id equal to the last one not copied at all (a streamed chunk then
//     copies its text alone);
//   - else referring into a copy of its params.
//
// The _meta values get copies of their own. No raw bytes of the line are
// kept: a chunk's event carries none (see wire.Update).
func (s *chunkScan) build(owned bool, c *Chunk) {
	var str func(sp span, slot int) string
	switch {
	case owned:
		str = s.referInto(s.b, 0)
	case s.shape != nil && s.shapeStringsPlain():
		str = s.arenaString // each string copied alone, the ids interned
	default:
		keep, base := s.keep(s.b[s.paramsSpan.start:s.paramsSpan.end]), s.paramsSpan.start
		str = s.referInto(keep, base)
	}
	*c = Chunk{ContentType: s.ctype}
	c.Kind = s.kind
	if s.hasText {
		c.Text = str(s.text, noIntern)
	}
	if s.hasContentMeta {
		c.ContentMeta = copyRaw(s.b, s.contentMeta)
	}
	if s.hasUpdateMeta {
		c.Meta = copyRaw(s.b, s.updateMeta)
	}
	if s.hasMsgID {
		c.MessageID, c.HasMessageID = str(s.messageID, internMessageID), true
	}
	if s.hasSessionID {
		c.SessionID = str(s.sessionID, internSessionID)
	}
	if s.hasParamsMeta {
		c.ParamsMeta = copyRaw(s.b, s.paramsMeta)
	}
}

// lean reports whether the line s matched is a text delta: a text block
// and no _meta but the chunk's (the others a delta would lose).
func (s *chunkScan) lean() bool {
	return s.ctype == contentText && !s.fallback && !s.hasContentMeta && !s.hasParamsMeta
}

// buildDelta fills c, a text delta (Lean), from the extracted spans: the
// text copied into the arena, decoded when it has escapes, and the session
// and message ids shared with the chunk before when they are the same.
func (s *chunkScan) buildDelta(c *Chunk) {
	*c = Chunk{ContentType: contentText, Lean: true}
	c.Kind = s.kind
	if s.hasText {
		c.Text = s.arenaString(s.text, noIntern)
	}
	if s.hasSessionID {
		c.SessionID = s.arenaString(s.sessionID, internSessionID)
	}
	if s.hasMsgID {
		c.MessageID, c.HasMessageID = s.arenaString(s.messageID, internMessageID), true
	}
	if s.hasUpdateMeta {
		c.Meta = s.keep(s.b[s.updateMeta.start:s.updateMeta.end])
	}
}

// referInto returns the strings of spans, for a line whose bytes from base
// on are kept in keep: plain ones refer into keep, others are decoded. It
// interns nothing: the slot is arenaString's.
func (s *chunkScan) referInto(keep []byte, base int) func(sp span, slot int) string {
	return func(sp span, _ int) string {
		if !sp.plain {
			return s.decoded(sp)
		}
		if sp.end == sp.start {
			return ""
		}
		return unsafe.String(&keep[sp.start-base], sp.end-sp.start)
	}
}

// shapeStringsPlain reports whether the shape cut only strings out of the
// line, all plain, so that the decoded strings are the line's bytes and
// the shape can give the line back. (A _meta it cut out would have to be
// kept as well: such a chunk keeps its params instead.)
func (s *chunkScan) shapeStringsPlain() bool {
	return (!s.hasSessionID || s.sessionID.plain) && (!s.hasMsgID || s.messageID.plain) &&
		(!s.hasText || s.text.plain) && !s.hasUpdateMeta
}

// arenaString returns the string at sp: a plain one copied into the arena,
// interned in slot unless slot is noIntern (see byteArena.intern); one with
// escapes decoded into the arena.
func (s *chunkScan) arenaString(sp span, slot int) string {
	if !sp.plain {
		return s.decoded(sp)
	}
	b := s.b[sp.start:sp.end]
	if slot == noIntern {
		return s.arena.cloneString(b)
	}
	return s.arena.intern(b, slot)
}

// decoded returns the string at sp with its escapes resolved, decoded
// into the arena when there is one.
func (s *chunkScan) decoded(sp span) string {
	if s.arena != nil {
		return s.arena.decodeString(s.b, sp)
	}
	d := appendString(make([]byte, 0, sp.end-sp.start), s.b, sp)
	return unsafe.String(unsafe.SliceData(d), len(d))
}

// keep returns a copy of b for the notification to keep.
func (s *chunkScan) keep(b []byte) []byte {
	if s.arena != nil {
		return s.arena.clone(b)
	}
	return bytes.Clone(b)
}

func copyRaw(b []byte, sp span) json.RawMessage {
	return append(json.RawMessage(nil), b[sp.start:sp.end]...)
}
