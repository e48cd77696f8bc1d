package bridge

import (
	"strings"
	"testing"
)

// A flood that merges reuses the merge buffers of the events the pump took:
// once warm, a merged event costs one allocation, its text, however many
// deltas it holds; and the text is the deltas', in order, each time.
func TestEventQueueReusesMergeBuffers(t *testing.T) {
	q := newEventQueue(100, 0)
	delta := Event{Kind: KindText, Key: "k", Text: "chunk "}
	const deltas = 200
	want := strings.Repeat(delta.Text, deltas-1) // the first stays alone
	var taken []Event
	cycle := func() {
		for range deltas {
			q.pushPtr(&delta)
		}
		taken = q.take(taken[:0], 10)
		if len(taken) != 2 || taken[0].Text != delta.Text || taken[1].Text != want {
			t.Fatalf("took %d events, the second with %d bytes of text; want the lone delta and the rest merged (%d bytes)",
				len(taken), len(taken[len(taken)-1].Text), len(want))
		}
	}
	cycle()
	if allocs := testing.AllocsPerRun(50, cycle); allocs > 1 {
		t.Errorf("a merged event of %d deltas cost %v allocations, want 1 (its text)", deltas-1, allocs)
	}
	if q.bytes != 0 {
		t.Errorf("the queue counts %d bytes once empty", q.bytes)
	}
}

// The queue keeps few merge buffers, and none of the large ones a single
// huge merge grew.
func TestEventQueueBoundsSpareMergeBuffers(t *testing.T) {
	q := newEventQueue(1000, 64<<20)
	var taken []Event
	for _, size := range []int{16, 1 << 10, maxSpareBuffer + 1} {
		for key := range 2 * maxSpareBuffers { // events the pump takes at once
			ev := Event{Kind: KindText, Key: string(rune('a' + key)), Text: strings.Repeat("x", size/2)}
			for range 3 {
				q.pushPtr(&ev)
			}
		}
		taken = q.take(taken[:0], 1000)
	}
	if len(q.spares) > maxSpareBuffers {
		t.Errorf("the queue keeps %d merge buffers, want at most %d", len(q.spares), maxSpareBuffers)
	}
	for _, b := range q.spares {
		if cap(b) > maxSpareBuffer {
			t.Errorf("the queue keeps a merge buffer of %d bytes, over %d", cap(b), maxSpareBuffer)
		}
	}
}
