package bridge

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acphost/acphost/acptest"
)

// TestEventQueueBoundsBytesMergesIncluded: with the pump stalled, deltas
// that merge into one waiting event stop growing it once the queue holds
// its maxBytes (the producer waits); after the pump takes, the producer
// goes on and the whole text arrives in order.
func TestEventQueueBoundsBytesMergesIncluded(t *testing.T) {
	const maxBytes, deltas, size = 64 << 10, 200, 2 << 10
	q := newEventQueue(1000, maxBytes)
	defer q.close()
	q.push(Event{Bridge: "a", Session: "s", Kind: KindTurnStart})
	var pushed atomic.Int64
	var want strings.Builder
	texts := make([]string, deltas)
	for i := range texts {
		texts[i] = fmt.Sprintf("%05d", i) + strings.Repeat("x", size-5)
		want.WriteString(texts[i])
	}
	go func() {
		for _, text := range texts {
			q.push(Event{Bridge: "a", Session: "s", Kind: KindText, Text: text, MessageID: "m"})
			pushed.Add(1)
		}
	}()
	waitStill(t, &pushed)
	if n := pushed.Load(); n == deltas {
		t.Fatalf("all %d deltas (%d KiB) were queued behind a stalled pump: merges are not bounded", n, deltas*size>>10)
	}
	q.mu.Lock()
	held := 0
	for _, ev := range q.events[q.head:] {
		held += len(ev.Text) + cap(ev.mergedText)
	}
	q.mu.Unlock()
	if held > maxBytes {
		t.Fatalf("the waiting events hold %d bytes, over the queue's %d", held, maxBytes)
	}
	var got strings.Builder
	for got.Len() < want.Len() {
		for _, ev := range q.take(nil, 100) {
			if ev.Kind == KindText {
				got.WriteString(ev.Text)
			}
		}
	}
	if got.String() != want.String() {
		t.Fatalf("text of %d bytes arrived, want %d in order", got.Len(), want.Len())
	}
}

// waitStill returns once n has stopped changing for a while (the producer
// is blocked), failing after a deadline.
func waitStill(t *testing.T, n *atomic.Int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	last, still := n.Load(), 0
	for still < 10 {
		if time.Now().After(deadline) {
			t.Fatal("the producer never stopped")
		}
		time.Sleep(2 * time.Millisecond)
		if cur := n.Load(); cur != last {
			last, still = cur, 0
			continue
		}
		still++
	}
}

// TestSubscriberTailBoundsBytes: the tail drops its oldest events once
// they hold more than its bytes, keeps the newest however large, and a
// subscriber whose events left it is told so.
func TestSubscriberTailBoundsBytes(t *testing.T) {
	const maxBytes = 16 << 10
	h := newHub(100, maxBytes, nil)
	for i := range 20 {
		h.publish([]Event{{Pos: uint64(i + 1), Kind: KindText, Text: strings.Repeat("x", 2<<10)}})
	}
	if h.n >= 20 || h.bytes > maxBytes {
		t.Fatalf("the tail holds %d events, %d bytes; its bound is %d bytes", h.n, h.bytes, maxBytes)
	}
	if v := h.look(0, Cursor{}, 100); !v.behind {
		t.Fatal("a cursor before the tail is not told that its events are gone")
	}
	h.publish([]Event{{Pos: 21, Kind: KindText, Text: strings.Repeat("y", 2*maxBytes)}})
	if v := h.look(20, Cursor{}, 100); len(v.events) != 1 || v.events[0].Pos != 21 || h.n != 1 {
		t.Fatalf("an event larger than the bound: %d events held, want just it", h.n)
	}
}

// TestHostAgentsShareOneQueueBudget: every agent a Host starts counts its
// queued output against the Host's one budget, half of MaxQueuedBytes.
func TestHostAgentsShareOneQueueBudget(t *testing.T) {
	h := NewHost(&HostOptions{MaxQueuedBytes: 1 << 20})
	defer h.Close()
	go func() {
		for range h.Events() {
		}
	}()
	var bridges []*Bridge
	for i := range 2 {
		b, err := h.Start(t.Context(), Config{ID: fmt.Sprint("b", i), Transport: &acptest.Transport{}})
		if err != nil {
			t.Fatal(err)
		}
		bridges = append(bridges, b)
	}
	a, b := bridges[0].cfg.Conn.Budget, bridges[1].cfg.Conn.Budget
	if a == nil || a != b || a != h.budget {
		t.Fatalf("the bridges' connections do not share the Host's budget: %p %p %p", a, b, h.budget)
	}
	if h.events.queue.maxBytes != 512<<10 {
		t.Fatalf("the event queue's bound is %d, want half of MaxQueuedBytes", h.events.queue.maxBytes)
	}
}

// TestSubscriberTailGrowsAsEventsCome: a new tail holds no events' memory;
// it grows as events come, wrapped or not, keeps them in order, and stops
// growing at its size, from where it drops the oldest.
func TestSubscriberTailGrowsAsEventsCome(t *testing.T) {
	const tail = 300
	h := newHub(tail, 200<<10, nil)
	if cap(h.ring) != 0 {
		t.Fatalf("a new tail holds room for %d events", cap(h.ring))
	}
	pos := uint64(0)
	publish := func(n, textBytes int) {
		batch := make([]Event, n)
		for i := range batch {
			pos++
			batch[i] = Event{Pos: pos, Kind: KindText, Text: strings.Repeat("t", textBytes)}
		}
		h.publish(batch)
	}
	check := func(when string) {
		t.Helper()
		first := pos - uint64(h.n) + 1
		v := h.look(first-1, Cursor{}, tail+1)
		if len(v.events) != h.n || v.oldest != first {
			t.Fatalf("%s: look gave %d events, the oldest held %d; want the %d newest from %d", when, len(v.events), v.oldest, h.n, first)
		}
		for i, ev := range v.events {
			if ev.Pos != first+uint64(i) {
				t.Fatalf("%s: event %d is at %d, want %d: out of order", when, i, ev.Pos, first+uint64(i))
			}
		}
		if len(h.ring) > tail {
			t.Fatalf("%s: the ring has room for %d events, more than its %d", when, len(h.ring), tail)
		}
	}
	publish(10, 10)
	if len(h.ring) >= tail {
		t.Fatalf("10 events took a ring of %d", len(h.ring))
	}
	check("first events")
	publish(60, 4<<10) // the byte bound drops the oldest: the ring wraps before it is full
	check("wrapped by bytes")
	if h.start == 0 {
		t.Fatal("the byte bound did not wrap the ring; the test lost its point")
	}
	publish(200, 10) // grows a wrapped ring
	check("grown from wrapped")
	publish(500, 10)
	check("at its size")
	if h.n != tail || len(h.ring) != tail {
		t.Fatalf("a full tail holds %d events in a ring of %d, want %d", h.n, len(h.ring), tail)
	}
}
