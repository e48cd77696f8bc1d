package acpclient

import (
	"bytes"
	"encoding/json"
	"unsafe"
)

// This file is a hand-written, single-pass decoder for the commonest line an
// agent sends: a session/update notification carrying a message chunk,
//
//	{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"…",
//	 "update":{"sessionUpdate":"agent_message_chunk",
//	 "content":{"type":"text","text":"…"},"messageId":"…"}}}
//
// with its keys in any order. It validates the whole line as JSON exactly as
// encoding/json would, and accepts a line only when the result is certain to
// be identical to what the general path (the envelope, then
// SessionNotification.UnmarshalJSON) produces. Anything unusual makes it
// decline, and a declined line takes the general path, so declining is always
// safe:
//
//   - a key that is not byte-for-byte a known key but that encoding/json would
//     match case-insensitively to one (e.g. "SessionId"), or a key containing
//     an escape or a non-ASCII byte at a level where keys are matched;
//   - a known key given twice;
//   - a known field of an unexpected JSON type (including null, except for
//     messageId, whose null means "no id" as it does for encoding/json);
//   - jsonrpc other than "2.0", any id/result/error, another method, another
//     update kind, an unknown content type;
//   - nesting deeper than maxChunkScanDepth inside skipped values.
//
// Unknown keys that encoding/json would ignore are validated and skipped.
//
// Content blocks with fields other than type, text and _meta (images,
// annotations…) are not decoded here: when the rest of the line is clean the
// scanner asks its caller to decode the line with encoding/json instead
// (chunkScanFallback), which for such a line is equivalent to the general path.
//
// Why hand-written: measured against github.com/go-json-experiment/json
// (encoding/json/v2, one pass into a typed struct, the strict mode the tool
// lines use) on BenchmarkFlood's lines, decoding only, medians of 5 runs on
// a 2-core machine, the library took 1.7 times the scanner's time and
// encoding/json 4.6 times. The library does win on tool calls, where
// toolline.go uses it.

// maxChunkScanDepth bounds the nesting of skipped values (_meta, unknown
// fields). encoding/json allows 10000 levels; deeper lines are declined.
const maxChunkScanDepth = 512

// chunkScanResult says what the scanner made of a line.
type chunkScanResult uint8

const (
	chunkScanDecline  chunkScanResult = iota // not (certainly) a plain chunk line: general path
	chunkScanOK                              // decoded
	chunkScanFallback                        // a chunk line with a rich content block: decode with encoding/json
)

// Known keys per level, used to detect keys that encoding/json would match to
// a field case-insensitively (they make the scanner decline).
var (
	envelopeKeys = []string{"jsonrpc", "id", "method", "params", "result", "error"}
	paramsKeys   = []string{"sessionId", "update", "_meta"}
	updateKeys   = []string{"sessionUpdate", "modeId", "content", "messageId", "_meta"}
	contentKeys  = []string{"type", "text", "data", "mimeType", "uri", "name", "title",
		"description", "size", "resource", "annotations", "_meta"}
)

// span is the position of a value in the line: for strings, the bytes
// between the quotes; plain means no escapes and valid UTF-8, so the bytes
// are the decoded string, and ascii that they are plain ASCII as well.
type span struct {
	start, end   int
	plain, ascii bool
}

// rawValue skips one value and returns where it lies, without the
// whitespace before it (as encoding/json's RawMessage).
func (s *chunkScan) rawValue() (span, bool) {
	s.ws()
	start := s.i
	if !s.skip() {
		return span{}, false
	}
	return span{start: start, end: s.i}, true
}

// chunkScan holds the scanner's position and what it has extracted.
type chunkScan struct {
	b []byte
	i int

	kind       string // the chunk kind (one of the Update* constants)
	ctype      string // content type (one of the Content* constants)
	paramsSpan span   // the params object
	sessionID  span
	text       span
	messageID  span
	hasMsgID   bool // messageId present and a string (null leaves it nil)

	hasSessionID, hasText bool

	paramsMeta, updateMeta, contentMeta span
	hasParamsMeta, hasUpdateMeta        bool
	hasContentMeta                      bool

	fallback bool // the content block needs encoding/json

	// shape is the shape the line matched, if it did (chunkShape.match).
	shape *chunkShape

	arena *byteArena // where build copies what it keeps; nil: its own allocation
}

// scanChunkInbound is scanChunkLine returning the notification as the
// queue entry that carries it.
func scanChunkInbound(line []byte, owned bool) (*inbound, chunkScanResult) {
	s := chunkScan{b: line}
	return s.scan(owned)
}

// scan is scanChunkInbound on the line s holds.
func (s *chunkScan) scan(owned bool) (*inbound, chunkScanResult) {
	if res := s.scanLine(); res != chunkScanOK {
		return nil, res
	}
	return s.build(owned), chunkScanOK
}

// scanLine walks the line s holds, says what it is, and for a plain chunk
// line leaves what it extracted in s.
func (s *chunkScan) scanLine() chunkScanResult {
	s.ws()
	if !s.envelope() {
		return chunkScanDecline
	}
	s.ws()
	if s.i != len(s.b) {
		return chunkScanDecline
	}
	if s.fallback {
		return chunkScanFallback
	}
	return chunkScanOK
}

// chunkBox is everything a decoded chunk line needs besides its bytes, in
// one allocation: the queue entry, the notification, its update and the
// message id the update points to. Allocating them apart cost three
// allocations per streamed chunk where one does. The three chunk kinds are
// the same struct (ContentChunk), so one box holds any of them.
type chunkBox struct {
	in inbound
	n  SessionNotification
	u  AgentMessageChunk // or, converted, the thought or user chunk
	id string
}

// newChunkBox returns a box whose update is the kind s found, and that
// update's chunk to fill.
func (s *chunkScan) newChunkBox() (*inbound, *ContentChunk) {
	b := new(chunkBox)
	var u SessionUpdate = &b.u
	switch s.kind {
	case UpdateAgentThoughtChunk:
		u = (*AgentThoughtChunk)(&b.u)
	case UpdateUserMessageChunk:
		u = (*UserMessageChunk)(&b.u)
	}
	b.n.Update = u
	b.in.method, b.in.update = methodSessionUpdate, &b.n
	b.u.MessageID = &b.id
	return &b.in, &b.u.ContentChunk
}

// build makes the notification from the extracted spans, queued as one
// inbound message. Its strings are taken in the cheapest of three ways:
//
//   - referring into the line itself when owned (the caller's to keep,
//     never overwritten);
//   - for a line that matched a shape (s.shape) with plain strings, each
//     string copied alone out of the read buffer, and a session or message
//     id equal to the last one not copied at all (a streamed chunk then
//     copies its text alone);
//   - else referring into a copy of its params.
//
// No raw bytes are kept: a chunk's event carries none (see wire.Update).
func (s *chunkScan) build(owned bool) *inbound {
	in, chunk := s.newChunkBox()
	n := in.update
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
	chunk.Content.Type = s.ctype
	if s.hasText {
		chunk.Content.Text = str(s.text, noIntern)
	}
	if s.hasContentMeta {
		chunk.Content.Meta = copyRaw(s.b, s.contentMeta)
	}
	if s.hasUpdateMeta {
		chunk.Meta = copyRaw(s.b, s.updateMeta)
	}
	if s.hasMsgID {
		*chunk.MessageID = str(s.messageID, internMessageID)
	} else {
		chunk.MessageID = nil
	}
	if s.hasSessionID {
		n.SessionID = str(s.sessionID, internSessionID)
	}
	if s.hasParamsMeta {
		n.Meta = copyRaw(s.b, s.paramsMeta)
	}
	in.size = queuedSize(len(s.b), false) // its strings refer into the kept bytes
	return in
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

// ws skips JSON whitespace. Compact JSON has none, so the first test,
// one comparison, is all it usually costs.
func (s *chunkScan) ws() {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// consume skips whitespace and then c, reporting whether c was there.
func (s *chunkScan) consume(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// peek returns the next byte, or 0 at the end.
func (s *chunkScan) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// object walks an object whose '{' is next, calling field for each member
// with the position at the member's value (whitespace skipped). field must
// consume the value. simple reports that the key has no escapes and only
// ASCII bytes; otherwise key holds its raw bytes and matches no known key.
func (s *chunkScan) object(field func(key []byte, simple bool) bool) bool {
	if !s.consume('{') {
		return false
	}
	s.ws()
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		s.ws()
		if s.peek() != '"' {
			return false
		}
		sp, ok := s.str()
		if !ok {
			return false
		}
		simple := sp.ascii
		if !s.consume(':') {
			return false
		}
		s.ws()
		if !field(s.b[sp.start:sp.end], simple) {
			return false
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// foldsToAny reports whether encoding/json could match key (plain ASCII) to
// one of names case-insensitively.
func foldsToAny(key []byte, names []string) bool {
	for _, n := range names {
		if len(n) == len(key) && bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}

// unknownKey handles a key that is not exactly a known one: it is skipped if
// encoding/json would ignore it too.
func (s *chunkScan) unknownKey(key []byte, simple bool, known []string) bool {
	if !simple || foldsToAny(key, known) {
		return false
	}
	return s.skip()
}

func (s *chunkScan) envelope() bool {
	var seen uint8
	return s.object(func(key []byte, simple bool) bool {
		var bit uint8
		switch string(key) {
		case "jsonrpc":
			bit = 1
			if !s.strEquals("2.0") {
				return false
			}
		case "method":
			bit = 2
			if !s.strEquals(methodSessionUpdate) {
				return false
			}
		case "params":
			bit = 4
			start := s.i
			if s.peek() != '{' || !s.params() {
				return false
			}
			s.paramsSpan = span{start: start, end: s.i}
		case "id", "result", "error":
			return false // a request or a response
		default:
			return s.unknownKey(key, simple, envelopeKeys)
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	}) && seen == 7
}

func (s *chunkScan) params() bool {
	var seen uint8
	return s.object(func(key []byte, simple bool) bool {
		var bit uint8
		switch string(key) {
		case "sessionId":
			bit = 1
			sp, ok := s.strValue()
			if !ok {
				return false
			}
			s.sessionID, s.hasSessionID = sp, true
		case "update":
			bit = 2
			if s.peek() != '{' || !s.update() {
				return false
			}
		case "_meta":
			bit = 4
			if s.paramsMeta, s.hasParamsMeta = s.rawValue(); !s.hasParamsMeta {
				return false
			}
		default:
			return s.unknownKey(key, simple, paramsKeys)
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	}) && seen&2 != 0
}

func (s *chunkScan) update() bool {
	var seen uint8
	return s.object(func(key []byte, simple bool) bool {
		var bit uint8
		switch string(key) {
		case "sessionUpdate":
			bit = 1
			sp, ok := s.strValue()
			if !ok || !sp.plain {
				return false
			}
			switch string(s.b[sp.start:sp.end]) {
			case UpdateAgentMessageChunk:
				s.kind = UpdateAgentMessageChunk
			case UpdateAgentThoughtChunk:
				s.kind = UpdateAgentThoughtChunk
			case UpdateUserMessageChunk:
				s.kind = UpdateUserMessageChunk
			default:
				return false
			}
		case "content":
			bit = 2
			if s.peek() != '{' || !s.content() {
				return false
			}
		case "messageId":
			bit = 4
			if s.peek() == 'n' {
				if !s.literal("null") {
					return false
				}
				break
			}
			sp, ok := s.strValue()
			if !ok {
				return false
			}
			s.messageID, s.hasMsgID = sp, true
		case "_meta":
			bit = 8
			if s.updateMeta, s.hasUpdateMeta = s.rawValue(); !s.hasUpdateMeta {
				return false
			}
		default:
			return s.unknownKey(key, simple, updateKeys)
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	}) && seen&3 == 3
}

// content decodes a content block with type, text and _meta only. Anything
// else in it that encoding/json would not ignore sets s.fallback; the block is
// still validated.
func (s *chunkScan) content() bool {
	var seen uint8
	return s.object(func(key []byte, simple bool) bool {
		if s.fallback {
			return s.skip()
		}
		var bit uint8
		switch string(key) {
		case "type":
			bit = 1
			if s.peek() != '"' {
				s.fallback = true
				return s.skip()
			}
			sp, ok := s.str()
			if !ok {
				return false
			}
			if !sp.plain {
				s.fallback = true
				return true
			}
			switch string(s.b[sp.start:sp.end]) {
			case ContentText:
				s.ctype = ContentText
			case ContentImage:
				s.ctype = ContentImage
			case ContentAudio:
				s.ctype = ContentAudio
			case ContentResourceLink:
				s.ctype = ContentResourceLink
			case ContentResource:
				s.ctype = ContentResource
			default:
				return false // unknown types keep their JSON: general path
			}
		case "text":
			bit = 2
			if s.peek() != '"' {
				s.fallback = true
				return s.skip()
			}
			sp, ok := s.str()
			if !ok {
				return false
			}
			s.text, s.hasText = sp, true
		case "_meta":
			bit = 4
			if s.contentMeta, s.hasContentMeta = s.rawValue(); !s.hasContentMeta {
				return false
			}
		default:
			if !simple || foldsToAny(key, contentKeys) {
				s.fallback = true
			}
			return s.skip()
		}
		if seen&bit != 0 {
			s.fallback = true
		}
		seen |= bit
		return true
	}) && (s.fallback || seen&1 != 0)
}
