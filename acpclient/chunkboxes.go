package acpclient

import (
	"sync"
	"unsafe"
)

// chunkBoxes keeps the boxes of chunks a SessionUpdateBatcher has been
// given, for the next chunks of the connection: a box is half a kilobyte
// (most of it the ContentBlock), and allocating one per streamed chunk was
// most of a flood's allocation and so of its collection cost. The batcher
// keeps no message-chunk notification past its call (see
// SessionUpdateBatcher); SessionUpdate's notifications are never reused.
//
// Boxes go back in runs: the dispatcher gives a delivered run's boxes back
// together (putRun), and the read goroutine takes a whole given-back run
// when it has used the one it took before (get), so each side pays for a
// pool operation per run, not per chunk. The pools empty themselves over
// garbage collections, and the read goroutine puts back what it took
// before it may wait on the agent (release), so an idle connection holds
// no boxes.
type chunkBoxes struct {
	taken []*chunkBox // the read goroutine's: emptied boxes to fill next
	full  sync.Pool   // *[]*chunkBox: runs of emptied boxes
	empty sync.Pool   // *[]*chunkBox: emptied runs, to fill with boxes again
}

// get returns an empty box: one given back, or a new one. It runs on the
// read goroutine; b may be nil (a scan without a decoder).
func (b *chunkBoxes) get() *chunkBox {
	if b == nil {
		return new(chunkBox)
	}
	if len(b.taken) == 0 {
		if run, ok := b.full.Get().(*[]*chunkBox); ok {
			b.taken, *run = *run, b.taken
			b.empty.Put(run)
		}
	}
	n := len(b.taken)
	if n == 0 {
		return new(chunkBox)
	}
	box := b.taken[n-1]
	b.taken[n-1] = nil
	b.taken = b.taken[:n-1]
	return box
}

// release puts the boxes the read goroutine took and has not used back in
// the pool, where a collection can reach them, before it waits.
func (b *chunkBoxes) release() {
	if b == nil || len(b.taken) == 0 {
		return
	}
	run := b.emptyRun()
	b.taken, *run = *run, b.taken
	b.full.Put(run)
}

// emptyRun returns a run to put boxes in.
func (b *chunkBoxes) emptyRun() *[]*chunkBox {
	if run, ok := b.empty.Get().(*[]*chunkBox); ok {
		return run
	}
	return new([]*chunkBox)
}

// putRun empties the boxes among a delivered run's entries and keeps them
// for reuse. Emptying here, on the dispatch goroutine, takes the work off
// the read goroutine, and a kept box refers to nothing. The entry is its
// box's first field, so its address is the box's.
func (b *chunkBoxes) putRun(entries []*inbound) {
	run := b.emptyRun()
	for _, m := range entries {
		if m.boxed {
			box := (*chunkBox)(unsafe.Pointer(m))
			*box = chunkBox{}
			*run = append(*run, box)
		}
	}
	if len(*run) == 0 {
		b.empty.Put(run)
		return
	}
	b.full.Put(run)
}
