package scan

import "unsafe"

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
