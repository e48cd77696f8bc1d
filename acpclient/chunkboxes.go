package acpclient

import (
	"sync"
	"unsafe"
)

// boxPool keeps the entries of delivered text deltas (deltaEntry) for the
// next deltas of the connection: no client ever holds one (a
// wire.Receiver gets copies), so they are reused once handed on, and
// emptying one clears only what the decoder wrote. Allocating one per
// streamed chunk was most of a flood's allocation and so of its collection
// cost. Notifications are never reused: a client keeps what it is given.
//
// Boxes go back in runs: the dispatcher gives a delivered run's boxes back
// together (keep, putFull), and the read goroutine takes a whole given-back run
// when it has used the one it took before (get), so each side pays for a
// pool operation per run, not per box. The pools empty themselves over
// garbage collections, and the read goroutine puts back what it took
// before it may wait on the agent (release), so an idle connection holds
// no boxes.
type boxPool[B any] struct {
	kind  boxKind   // the inbound entries whose boxes these are
	taken []*B      // the read goroutine's: emptied boxes to fill next
	full  sync.Pool // *[]*B: runs of emptied boxes
	empty sync.Pool // *[]*B: emptied runs, to fill with boxes again
}

// boxKind says which pool's box an inbound entry is the first field of.
type boxKind uint8

const (
	notBoxed boxKind = iota
	inDeltaEntry
)

type deltaBoxes = boxPool[deltaEntry]

// get returns an empty box: one given back, or a new one. It runs on the
// read goroutine; p may be nil (a scan without a decoder).
func (p *boxPool[B]) get() *B {
	if p == nil {
		return new(B)
	}
	if len(p.taken) == 0 {
		if run, ok := p.full.Get().(*[]*B); ok {
			p.taken, *run = *run, p.taken
			p.empty.Put(run)
		}
	}
	n := len(p.taken)
	if n == 0 {
		return new(B)
	}
	box := p.taken[n-1]
	p.taken[n-1] = nil
	p.taken = p.taken[:n-1]
	return box
}

// release puts the boxes the read goroutine took and has not used back in
// the pool, where a collection can reach them, before it waits.
func (p *boxPool[B]) release() {
	if p == nil || len(p.taken) == 0 {
		return
	}
	run := p.emptyRun()
	p.taken, *run = *run, p.taken
	p.full.Put(run)
}

// emptyRun returns a run to put boxes in.
func (p *boxPool[B]) emptyRun() *[]*B {
	if run, ok := p.empty.Get().(*[]*B); ok {
		return run
	}
	return new([]*B)
}

// keep empties the box m is the first field of (so its address is the
// box's) and adds it to *run, taking an empty run on first use. Emptying
// here, on the dispatch goroutine, takes the work off the read goroutine,
// and a kept box refers to nothing.
func (p *boxPool[B]) keep(run **[]*B, m *inbound) {
	if *run == nil {
		*run = p.emptyRun()
	}
	box := (*B)(unsafe.Pointer(m))
	var empty B
	*box = empty
	**run = append(**run, box)
}

// putFull hands a run of emptied boxes (keep) to the read goroutine.
func (p *boxPool[B]) putFull(run *[]*B) { p.full.Put(run) }
