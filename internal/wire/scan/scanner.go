package scan

import "bytes"

// This file is a hand-written, single-pass decoder for the commonest line an
// agent sends: a session/update notification carrying a message chunk,
//
//	{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"…",
//	 "update":{"sessionUpdate":"agent_message_chunk",
//	 "content":{"type":"text","text":"…"},"messageId":"…"}}}
//
// with its keys in any order. It validates the whole line as JSON exactly as
// encoding/json would, and accepts a line only when the result is certain to
// be identical to what acpclient's general path (the envelope, then
// SessionNotification.UnmarshalJSON, which is encoding/json) produces. Anything unusual makes it
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
// (Fallback), which for such a line is equivalent to the general path.
//
// Why hand-written: measured against github.com/go-json-experiment/json
// (encoding/json/v2, one pass into a typed struct, the strict mode the tool
// lines use) on BenchmarkFlood's lines, decoding only, medians of 5 runs on
// a 2-core machine, the library took 1.7 times the scanner's time and
// encoding/json 4.6 times. The library does win on tool calls, where
// acpclient's tool-line decoder uses it.

// maxChunkScanDepth bounds the nesting of skipped values (_meta, unknown
// fields). encoding/json allows 10000 levels; deeper lines are declined.
const maxChunkScanDepth = 512

// The protocol's strings the scanner matches: the method, the chunk kinds
// and the content types ACP defines (acpclient's Update* and Content*
// constants; the contract is ACP's schema).
const (
	methodSessionUpdate     = "session/update"
	updateAgentMessageChunk = "agent_message_chunk"
	updateAgentThoughtChunk = "agent_thought_chunk"
	updateUserMessageChunk  = "user_message_chunk"
	contentText             = "text"
	contentImage            = "image"
	contentAudio            = "audio"
	contentResourceLink     = "resource_link"
	contentResource         = "resource"
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

	kind       string // the chunk kind (one of the update* constants)
	ctype      string // content type (one of the content* constants)
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

// scanLine walks the line s holds, says what it is, and for a plain chunk
// line leaves what it extracted in s.
func (s *chunkScan) scanLine() Result {
	s.ws()
	if !s.envelope() {
		return Decline
	}
	s.ws()
	if s.i != len(s.b) {
		return Decline
	}
	if s.fallback {
		return Fallback
	}
	return OK
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
			case updateAgentMessageChunk:
				s.kind = updateAgentMessageChunk
			case updateAgentThoughtChunk:
				s.kind = updateAgentThoughtChunk
			case updateUserMessageChunk:
				s.kind = updateUserMessageChunk
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
			case contentText:
				s.ctype = contentText
			case contentImage:
				s.ctype = contentImage
			case contentAudio:
				s.ctype = contentAudio
			case contentResourceLink:
				s.ctype = contentResourceLink
			case contentResource:
				s.ctype = contentResource
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
