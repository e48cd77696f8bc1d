package acpclient

import "unsafe"

// chunkDecoder decodes the chunk lines of one connection. It remembers the
// shapes of the last chunk lines it accepted (chunkShape), so that a stream
// of chunks costs a match each instead of a full scan, and it copies what a
// chunk keeps into slabs shared by many chunks (byteArena) instead of one
// allocation each. It belongs to the read goroutine: no locks.
type chunkDecoder struct {
	shapes [chunkShapes]*chunkShape
	last   int // the shape that matched last, tried first
	// used[j] is when shapes[j] last matched or was made, in lines
	// accepted: a new shape replaces the one least recently used (an
	// empty slot first).
	used  [chunkShapes]uint64
	clock uint64
	arena byteArena
	// lean says the Client takes text deltas (a wire.Receiver): chunk
	// lines that are one become a deltaEntry, not a notification.
	lean bool
	// deltas is shared with the dispatch goroutine, which gives entries
	// back. It is made with the first delta, so an idle connection does
	// not hold it; the dispatcher reads it only for entries queued after
	// that, which the queue's lock orders after the write.
	deltas *deltaBoxes
}

// giveBack keeps the entries of the text deltas of a delivered run for
// the next deltas (see boxPool). It runs on the dispatch goroutine and
// reads the pool only once it has seen an entry boxed there, which was
// queued after the pool was made. No entry goes back before the whole run
// has been read: once back, the read goroutine refills it.
func (d *chunkDecoder) giveBack(run []*inbound) {
	var deltas *[]*deltaEntry
	for _, m := range run {
		if m.boxed == inDeltaEntry {
			d.deltas.keep(&deltas, m)
		}
	}
	if deltas != nil {
		d.deltas.putFull(deltas)
	}
}

// chunkShapes is how many shapes a decoder remembers: an agent interleaving
// message, thought and user chunks, or two sessions, uses a few at once.
const chunkShapes = 4

// decode is decodeChunkInbound with the decoder's shapes and slabs.
func (d *chunkDecoder) decode(line []byte, owned bool) *inbound {
	s := chunkScan{b: line, arena: &d.arena}
	for k := range chunkShapes {
		j := (d.last + k) % chunkShapes
		if sh := d.shapes[j]; sh != nil && sh.match(&s) {
			d.clock++
			d.last, d.used[j] = j, d.clock
			if d.lean && s.leanDelta() {
				return s.buildDelta(d)
			}
			s.shape = sh
			return s.build(owned)
		}
	}
	s = chunkScan{b: line, arena: &d.arena}
	switch s.scanLine() {
	case chunkScanOK:
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
		if d.lean && s.leanDelta() {
			return s.buildDelta(d)
		}
		return s.build(owned)
	case chunkScanFallback:
		return chunkFallback(line, owned)
	}
	return nil
}

// byteArena copies small byte slices into shared slabs: one allocation per
// slab rather than one per copy. A slab stays in memory while anything
// refers into it, so copies larger than an eighth of a slab get their own
// allocation, and a slab is never written again where a copy lies.
type byteArena struct {
	slab []byte
	// interned holds the last string intern returned for each slot: the
	// session and message ids of a stream repeat from chunk to chunk.
	interned [2]string
}

// The slots of byteArena.intern, and noIntern for a string not worth one.
const (
	internSessionID = 0
	internMessageID = 1
	noIntern        = -1
)

// arenaSlabSize is the size of a slab: about fifty chunk lines' params, small
// next to the 64 KiB a reading connection's line buffer holds.
const arenaSlabSize = 8 << 10

// clone returns a copy of b that nothing else will write to.
func (a *byteArena) clone(b []byte) []byte {
	if len(b) > arenaSlabSize/8 {
		return append([]byte(nil), b...)
	}
	if len(b) > cap(a.slab)-len(a.slab) {
		a.slab = make([]byte, 0, arenaSlabSize)
	}
	n := len(a.slab)
	a.slab = append(a.slab, b...)
	return a.slab[n:len(a.slab):len(a.slab)]
}

// decodeString returns the string at sp in b decoded (appendString) into
// a slab, or into an allocation of its own when it could be large.
func (a *byteArena) decodeString(b []byte, sp span) string {
	n := maxDecoded * (sp.end - sp.start)
	var d []byte
	switch {
	case n > arenaSlabSize/8:
		d = appendString(make([]byte, 0, sp.end-sp.start), b, sp)
	default:
		if n > cap(a.slab)-len(a.slab) {
			a.slab = make([]byte, 0, arenaSlabSize)
		}
		start := len(a.slab)
		a.slab = appendString(a.slab, b, sp)
		d = a.slab[start:len(a.slab):len(a.slab)]
	}
	return unsafe.String(unsafe.SliceData(d), len(d))
}

// cloneString is clone as a string.
func (a *byteArena) cloneString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	c := a.clone(b)
	return unsafe.String(&c[0], len(c))
}

// intern returns b as a string: the one it returned last for slot when
// that is equal, else a new copy, which slot then remembers.
func (a *byteArena) intern(b []byte, slot int) string {
	if string(b) != a.interned[slot] {
		a.interned[slot] = a.cloneString(b)
	}
	return a.interned[slot]
}
