package scan

import "sync"

// Pool keeps boxes (B) that the reading goroutine fills and another
// goroutine empties once it has handed their contents on, so that a box
// is not allocated per line: acpclient keeps the queue entries of its
// text deltas here, which no client ever holds (a receiver gets copies).
// Allocating one per streamed chunk was most of a flood's allocation and
// so of its collection cost.
//
// Boxes go back in runs: the consumer gives a delivered run's boxes back
// together (Keep, PutFull), and the reader takes a whole given-back run
// when it has used the one it took before (Get), so each side pays for a
// pool operation per run, not per box. The pool empties itself over
// garbage collections, and the reader puts back what it took before it
// may wait (Release), so an idle connection holds no boxes.
type Pool[B any] struct {
	taken []*B      // the reader's: emptied boxes to fill next
	full  sync.Pool // *[]*B: runs of emptied boxes
	empty sync.Pool // *[]*B: emptied runs, to fill with boxes again
}

// Get returns an empty box: one given back, or a new one. It runs on the
// reading goroutine.
func (p *Pool[B]) Get() *B {
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

// Release puts the boxes the reader took and has not used back in the
// pool, where a collection can reach them, before it waits. p may be nil.
func (p *Pool[B]) Release() {
	if p == nil || len(p.taken) == 0 {
		return
	}
	run := p.emptyRun()
	p.taken, *run = *run, p.taken
	p.full.Put(run)
}

// Held is how many boxes the reader holds: zero after Release.
func (p *Pool[B]) Held() int { return len(p.taken) }

// emptyRun returns a run to put boxes in.
func (p *Pool[B]) emptyRun() *[]*B {
	if run, ok := p.empty.Get().(*[]*B); ok {
		return run
	}
	return new([]*B)
}

// Keep empties box and adds it to *run, taking an empty run on first use.
// Emptying here, on the consumer's goroutine, takes the work off the
// reader, and a kept box refers to nothing.
func (p *Pool[B]) Keep(run **[]*B, box *B) {
	if *run == nil {
		*run = p.emptyRun()
	}
	var empty B
	*box = empty
	**run = append(**run, box)
}

// PutFull hands a run of emptied boxes (Keep) back to the reader.
func (p *Pool[B]) PutFull(run *[]*B) { p.full.Put(run) }
