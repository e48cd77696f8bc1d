package bridge

import (
	"strings"
	"testing"
	"time"
)

// TestEventQueueMergesDeltasAndBlocksWhenFull: with no reader, deltas of one
// message fold together, other events fill the queue, and the producer then
// waits; once read, everything arrives in order with seq numbers.
func TestEventQueueMergesDeltasAndBlocksWhenFull(t *testing.T) {
	q := newEventQueue(5)
	defer q.abandon()
	push := func(ev Event) { q.push(ev) }
	push(Event{Bridge: "a", Session: "s", Kind: KindTurnStart})
	push(Event{Bridge: "a", Session: "s", Kind: KindText, Text: "a"}) // may be in the pump's hands
	for _, w := range []string{"b", "c", "d"} {
		push(Event{Bridge: "a", Session: "s", Kind: KindText, Text: w, MessageID: "m"})
	}
	push(Event{Bridge: "a", Session: "s", Kind: KindThinking, Text: "x"})
	push(Event{Bridge: "b", Session: "s", Kind: KindText, Text: "other agent"})
	blocked := make(chan struct{})
	go func() {
		push(Event{Bridge: "a", Session: "s", Kind: KindTurnEnd})
		close(blocked)
	}()
	select {
	case <-blocked:
		t.Fatal("push did not wait on a full queue")
	case <-time.After(30 * time.Millisecond):
	}
	var got []string
	for range 5 {
		ev := <-q.out
		got = append(got, ev.Bridge+":"+describe(ev))
	}
	<-blocked
	ev := <-q.out
	got = append(got, ev.Bridge+":"+describe(ev))
	want := "a:turn_start: a:text:a a:text:bcd a:thinking:x b:text:other agent a:turn_end:"
	if strings.Join(got, " ") != want {
		t.Fatalf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
	if ev.Seq != 5 {
		t.Errorf("seq of the last event of a/s = %d, want 5 (no gaps after merging)", ev.Seq)
	}
}
