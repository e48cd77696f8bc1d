// Package scan is acpclient's fast decoder of session/update lines: a
// hand-written single-pass scanner for message-chunk lines, which
// remembers the shapes of the lines it accepted (so a stream of chunks
// costs a match each instead of a full scan) and copies what a chunk keeps
// into slabs shared by many chunks, plus what a replay needs to hand an
// update's raw bytes on without decoding them twice (LocateUpdate).
//
// Its one entry is Decoder.Decode: a line in, the chunk it carries out,
// as plain strings acpclient turns into its public types. Declining a
// line is always safe: the caller then decodes it with encoding/json. The
// package knows nothing of acpclient's types; Pool is the free list
// acpclient keeps its text-delta queue entries in.
package scan

import (
	"encoding/json"

	"github.com/acphost/acphost/internal/wire"
)

// Result says what Decode made of a line.
type Result uint8

const (
	// Decline: not (certainly) a plain chunk line; decode it as any line.
	Decline Result = iota
	// OK: decoded into the Chunk.
	OK
	// Fallback: a chunk line whose content block has fields other than
	// type, text and _meta (an image, annotations...): decode it with
	// encoding/json as a chunk line, which for such a line is equivalent
	// to the general path.
	Fallback
)

// Chunk is a decoded message-chunk line: the text delta it carries (its
// Kind is the update kind; Meta is the chunk's own _meta) and what a text
// delta leaves out. Its strings and raw values are the caller's to keep.
type Chunk struct {
	wire.TextDelta
	// ContentType is the content block's type (one of ACP's known ones).
	ContentType string
	// ContentMeta and ParamsMeta are the block's and the notification's
	// _meta, nil when absent.
	ContentMeta, ParamsMeta json.RawMessage
	// Lean says the Decoder is Lean and the line is a text delta: a text
	// block, no _meta but the chunk's. Its strings were then copied into
	// the decoder's slabs, never referring into the line.
	Lean bool
}

// Decoder decodes the chunk lines of one connection. It remembers the
// shapes of the last chunk lines it accepted (chunkShape), so that a stream
// of chunks costs a match each instead of a full scan, and it copies what a
// chunk keeps into slabs shared by many chunks (byteArena) instead of one
// allocation each. It belongs to the goroutine reading the connection: no
// locks. The zero value is ready to use.
type Decoder struct {
	// Lean says the connection takes text deltas: Decode marks the lines
	// that are one (Chunk.Lean).
	Lean bool

	shapes [chunkShapes]*chunkShape
	last   int // the shape that matched last, tried first
	// used[j] is when shapes[j] last matched or was made, in lines
	// accepted: a new shape replaces the one least recently used (an
	// empty slot first).
	used  [chunkShapes]uint64
	clock uint64
	arena byteArena
}

// chunkShapes is how many shapes a decoder remembers: an agent interleaving
// message, thought and user chunks, or two sessions, uses a few at once.
const chunkShapes = 4

// Decode decodes line into c when it is a session/update notification
// carrying a message chunk with a plain content block, exactly as
// encoding/json decodes it (see scanner.go for what makes it decline).
// owned says the line is the caller's to keep (never overwritten), so c's
// strings may refer into it; otherwise c keeps copies. c is changed only
// when the result is OK.
func (d *Decoder) Decode(line []byte, owned bool, c *Chunk) Result {
	s := chunkScan{b: line, arena: &d.arena}
	for k := range chunkShapes {
		j := (d.last + k) % chunkShapes
		if sh := d.shapes[j]; sh != nil && sh.match(&s) {
			d.clock++
			d.last, d.used[j] = j, d.clock
			s.shape = sh
			d.build(&s, owned, c)
			return OK
		}
	}
	s = chunkScan{b: line, arena: &d.arena}
	res := s.scanLine()
	if res != OK {
		return res
	}
	// Replace the shape least recently used, reusing its memory: lines
	// that keep changing shape (a counter in the notification's _meta)
	// make one shape each.
	j := 0
	for k := range chunkShapes {
		if d.used[k] < d.used[j] {
			j = k
		}
	}
	if sh := newChunkShape(&s, d.shapes[j]); sh != nil {
		d.clock++
		d.shapes[j], d.last, d.used[j] = sh, j, d.clock
	}
	d.build(&s, owned, c)
	return OK
}

// build fills c from the line s accepted: as a text delta when it is one
// and the decoder is lean.
func (d *Decoder) build(s *chunkScan, owned bool, c *Chunk) {
	if d.Lean && s.lean() {
		s.buildDelta(c)
		return
	}
	s.build(owned, c)
}

// scanOnce decodes line as Decode does, with no shapes and no slabs: the
// full scan a shape must agree with.
func scanOnce(line []byte, owned bool, c *Chunk) Result {
	s := chunkScan{b: line}
	res := s.scanLine()
	if res == OK {
		s.build(owned, c)
	}
	return res
}
