package scan

import (
	"bytes"
	"slices"
)

// chunkShape is the skeleton of a chunk line the full scanner accepted: the
// line with its variable parts (session id, message id, text, and the
// chunk's _meta, which may carry a counter) cut out.
// An agent writes every chunk of a stream with the same keys in the same
// order, so the next line usually differs from the last only in those
// parts. Matching it against the shape costs a few memory compares and
// one pass of the string lexer over the strings, where the full scan walks
// every key and value (BenchmarkChunkShape has the figures).
//
// A line that matches means exactly what the full scan makes of it: its
// bytes outside the variable parts are the accepted line's, so are its
// keys, value types and fixed values (jsonrpc, method, the update kind, the
// content type), and the lexer state at each literal; each variable string
// is validated by the scanner's own str, and the _meta value by its skip.
// A line that does not match takes the full scan, so a shape never
// declines what the scanner would accept.
type chunkShape struct {
	lits  []byte                // the literals, back to back
	cuts  [maxShapeVars + 2]int // lits[cuts[k]:cuts[k+1]] is literal k
	vars  [maxShapeVars]shapeVar
	nvars int

	kind, ctype string
	// Where the spans the scanner records besides the variables lie: the
	// params object and the notification's and block's _meta, which are
	// literal bytes of the shape.
	params, paramsMeta, contentMeta shapeSpan
	hasParamsMeta, hasContentMeta   bool
}

// shapeSpan is a span of a line as positions in the shape.
type shapeSpan struct{ start, end shapePos }

// maxShapeVars is how many parts of a chunk line vary.
const maxShapeVars = 4

// shapeVar names a variable part of a shape: a string, or the chunk's
// _meta, a JSON value of any kind.
type shapeVar uint8

const (
	shapeSessionID shapeVar = iota
	shapeMessageID
	shapeText
	shapeUpdateMeta

	shapeStrings = shapeUpdateMeta // how many of the variables are strings
)

// quoted reports whether v is a string, whose quotes are in the literals
// around it and whose span (a string's contents) leaves them out.
func (v shapeVar) quoted() int {
	if v < shapeStrings {
		return 1
	}
	return 0
}

// shapePos is a position in a line as literal number and offset in it.
type shapePos struct{ lit, off int }

// literal returns literal k.
func (sh *chunkShape) literal(k int) []byte { return sh.lits[sh.cuts[k]:sh.cuts[k+1]] }

// newChunkShape returns the shape of the line s has just accepted, or nil
// for a rich content block (not the scanner's to decode). reuse, when not
// nil, is a shape no longer wanted: the new one takes its memory.
func newChunkShape(s *chunkScan, reuse *chunkShape) *chunkShape {
	if s.fallback {
		return nil
	}
	type cut struct {
		v  shapeVar
		sp span
	}
	cuts := make([]cut, 0, maxShapeVars)
	if s.hasSessionID {
		cuts = append(cuts, cut{shapeSessionID, s.sessionID})
	}
	if s.hasMsgID {
		cuts = append(cuts, cut{shapeMessageID, s.messageID})
	}
	if s.hasText {
		cuts = append(cuts, cut{shapeText, s.text})
	}
	if s.hasUpdateMeta {
		cuts = append(cuts, cut{shapeUpdateMeta, s.updateMeta})
	}
	slices.SortFunc(cuts, func(a, b cut) int { return a.sp.start - b.sp.start })

	sh := reuse
	var lits []byte
	if sh == nil {
		sh, lits = new(chunkShape), make([]byte, 0, len(s.b))
	} else {
		lits = reuse.lits[:0]
	}
	*sh = chunkShape{lits: lits, kind: s.kind, ctype: s.ctype, nvars: len(cuts),
		hasParamsMeta: s.hasParamsMeta, hasContentMeta: s.hasContentMeta}
	// starts[k] is where literal k begins in the line; a string's bytes,
	// quotes included, are b[sp.start-1 : sp.end+1].
	var starts [maxShapeVars + 1]int
	at := 0
	for k, c := range cuts {
		q := c.v.quoted()
		starts[k] = at
		sh.lits = append(sh.lits, s.b[at:c.sp.start-q]...)
		sh.cuts[k+1] = len(sh.lits)
		sh.vars[k] = c.v
		at = c.sp.end + q
	}
	starts[len(cuts)] = at
	sh.lits = append(sh.lits, s.b[at:]...)
	sh.cuts[len(cuts)+1] = len(sh.lits)
	pos := func(p int) shapePos {
		k := 0
		for k < len(cuts) && starts[k+1] <= p {
			k++
		}
		return shapePos{lit: k, off: p - starts[k]}
	}
	// A span's end is kept as its last byte's position: the byte after it
	// may be where a variable starts.
	place := func(sp span) shapeSpan { return shapeSpan{pos(sp.start), pos(sp.end - 1)} }
	sh.params = place(s.paramsSpan)
	if sh.hasParamsMeta {
		sh.paramsMeta = place(s.paramsMeta)
	}
	if sh.hasContentMeta {
		sh.contentMeta = place(s.contentMeta)
	}
	return sh
}

// at is the span's place in a line whose literals start at starts.
func (sp shapeSpan) at(starts *[maxShapeVars + 1]int) span {
	return span{start: starts[sp.start.lit] + sp.start.off, end: starts[sp.end.lit] + sp.end.off + 1}
}

// match reports whether s.b has the shape, and if so fills s as the full
// scan would.
func (sh *chunkShape) match(s *chunkScan) bool {
	b := s.b
	var starts [maxShapeVars + 1]int
	i := 0
	for k := range sh.nvars {
		lit := sh.literal(k)
		if len(b)-i < len(lit)+1 || !bytes.Equal(b[i:i+len(lit)], lit) {
			return false
		}
		starts[k] = i
		s.i = i + len(lit)
		if sh.vars[k] == shapeUpdateMeta {
			if s.updateMeta, s.hasUpdateMeta = s.rawValue(); !s.hasUpdateMeta {
				return false
			}
			i = s.i
			continue
		}
		if b[s.i] != '"' {
			return false
		}
		sp, ok := s.str()
		if !ok {
			return false
		}
		switch sh.vars[k] {
		case shapeSessionID:
			s.sessionID, s.hasSessionID = sp, true
		case shapeMessageID:
			s.messageID, s.hasMsgID = sp, true
		case shapeText:
			s.text, s.hasText = sp, true
		}
		i = s.i
	}
	if last := sh.literal(sh.nvars); !bytes.Equal(b[i:], last) {
		return false
	}
	starts[sh.nvars] = i
	s.i = len(b)
	s.kind, s.ctype = sh.kind, sh.ctype
	s.paramsSpan = sh.params.at(&starts)
	if s.hasParamsMeta = sh.hasParamsMeta; s.hasParamsMeta {
		s.paramsMeta = sh.paramsMeta.at(&starts)
	}
	if s.hasContentMeta = sh.hasContentMeta; s.hasContentMeta {
		s.contentMeta = sh.contentMeta.at(&starts)
	}
	return true
}
