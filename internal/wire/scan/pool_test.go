package scan

import (
	"runtime/debug"
	"testing"
)

type box struct{ n int }

// Boxes kept and handed back are emptied and taken again by Get, a run at
// a time, and Release leaves the reader holding none. (The race detector
// makes sync.Pool drop what it is given now and then: there a box given
// back need not come back, but one that does is empty.)
func TestPoolReusesBoxesInRuns(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // a collection empties the pool
	var p Pool[box]
	boxes := make([]*box, 8)
	for i := range boxes {
		boxes[i] = p.Get()
		boxes[i].n = i + 1
	}
	var run *[]*box
	for _, b := range boxes {
		p.Keep(&run, b)
	}
	p.PutFull(run)
	seen := map[*box]bool{}
	for _, b := range boxes {
		seen[b] = true
	}
	got := p.Get()
	if seen[got] && got.n != 0 {
		t.Fatalf("Get returned a box given back holding %d, want it emptied", got.n)
	}
	if raceEnabled && !seen[got] {
		return
	}
	if !seen[got] {
		t.Fatal("Get did not take the run given back")
	}
	if p.Held() != len(boxes)-1 {
		t.Fatalf("the reader holds %d boxes after taking a run of %d and using one", p.Held(), len(boxes))
	}
	p.Release()
	if p.Held() != 0 {
		t.Fatalf("the reader holds %d boxes after Release", p.Held())
	}
	if again := p.Get(); !seen[again] && !raceEnabled {
		t.Fatal("the released boxes did not come back")
	}
	var nilPool *Pool[box]
	nilPool.Release() // a connection that never made a delta
}
