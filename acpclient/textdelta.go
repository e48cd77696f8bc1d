package acpclient

import (
	"unsafe"

	"github.com/acphost/acphost/internal/wire"
	"github.com/acphost/acphost/internal/wire/scan"
)

// deltaEntry is a queue entry carrying a text delta. No client ever holds
// one (a wire.Receiver gets copies), so entries are reused once handed on
// (scan.Pool). Notifications are never reused: a client keeps what it is
// given.
type deltaEntry struct {
	in inbound // first, so the entry's address is the box's (giveBack)
	d  wire.TextDelta
}

// boxKind says which pool's box an inbound entry is the first field of.
type boxKind uint8

const (
	notBoxed boxKind = iota
	inDeltaEntry
)

// newDelta returns the queue entry of the text delta td, decoded from a
// line of n bytes.
func (d *chunkDecoder) newDelta(td *wire.TextDelta, n int) *inbound {
	if d.deltas == nil {
		d.deltas = new(scan.Pool[deltaEntry])
	}
	e := d.deltas.Get()
	e.d = *td
	e.in = inbound{method: methodSessionUpdate, delta: &e.d, boxed: inDeltaEntry, size: queuedSize(n, false)}
	return &e.in
}

// giveBack keeps the entries of the text deltas of a delivered run for
// the next deltas. It runs on the dispatch goroutine and reads the pool
// only once it has seen an entry boxed there, which was queued after the
// pool was made. No entry goes back before the whole run has been read:
// once back, the read goroutine refills it.
func (d *chunkDecoder) giveBack(run []*inbound) {
	var deltas *[]*deltaEntry
	for _, m := range run {
		if m.boxed == inDeltaEntry {
			d.deltas.Keep(&deltas, (*deltaEntry)(unsafe.Pointer(m)))
		}
	}
	if deltas != nil {
		d.deltas.PutFull(deltas)
	}
}
