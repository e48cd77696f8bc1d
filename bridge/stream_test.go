package bridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/waitfor"
)

// TestEventQueueMergesDeltasAndBlocksWhenFull: deltas of one message fold
// together while they wait, other events fill the queue, and the producer
// then waits until the pump takes some; events the pump has taken are never
// merged into.
func TestEventQueueMergesDeltasAndBlocksWhenFull(t *testing.T) {
	q := newEventQueue(5, 0)
	defer q.close()
	push := func(ev Event) { q.push(ev) }
	push(Event{Bridge: "a", Session: "s", Kind: KindTurnStart})
	push(Event{Bridge: "a", Session: "s", Kind: KindText, Text: "a"})
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
	got := q.take(nil, 2)
	<-blocked // room was made
	got = q.take(got, 100)
	want := "a:turn_start: a:text:a a:text:bcd a:thinking:x b:text:other agent a:turn_end:"
	if d := describeAll(got); d != want {
		t.Fatalf("got  %s\nwant %s", d, want)
	}
	// The text event is taken now: a continuation is a new event, and a
	// lone waiting event is not merged into either.
	for _, w := range []string{"e", "f", "g"} {
		q.push(Event{Bridge: "a", Session: "s", Kind: KindText, Text: w, MessageID: "m"})
	}
	if d := describeAll(q.take(nil, 100)); d != "a:text:e a:text:fg" {
		t.Fatalf("after a take: %s, want a:text:e a:text:fg", d)
	}
}

func describeAll(events []Event) string {
	var parts []string
	for _, ev := range events {
		parts = append(parts, ev.Bridge+":"+describe(ev))
	}
	return strings.Join(parts, " ")
}

// TestPumpNumbersPosAndSeqPerKey: Pos counts every event of the Host once,
// across bridges; Seq counts per session key, and per bridge for
// agent-wide events.
func TestPumpNumbersPosAndSeqPerKey(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	pushed := []Event{
		{Bridge: "a", Key: "k1", Kind: KindNotice},
		{Bridge: "b", Key: "k2", Kind: KindNotice},
		{Bridge: "a", Kind: KindExited},
		{Bridge: "a", Key: "k1", Session: "new-native-id", Kind: KindNotice},
		{Bridge: "b", Kind: KindExited},
		{Bridge: "a", Key: "k3", Kind: KindNotice},
		{Bridge: "a", Kind: KindExited},
		{Bridge: "b", Key: "k2", Kind: KindNotice},
	}
	for _, ev := range pushed {
		h.events.push(ev)
	}
	h.Shutdown(context.Background())
	waitfor.Closed(t, rec.done, "the recorder to have read every event")
	got := rec.snapshot()
	wantSeq := []uint64{1, 1, 1, 2, 1, 1, 2, 2}
	if len(got) != len(pushed) {
		t.Fatalf("delivered %d events, want %d", len(got), len(pushed))
	}
	for i, ev := range got {
		if ev.Pos != uint64(i+1) || ev.Seq != wantSeq[i] || ev.Key != pushed[i].Key || ev.Bridge != pushed[i].Bridge {
			t.Errorf("event %d: %s/%s pos %d seq %d, want %s/%s pos %d seq %d", i, ev.Bridge, ev.Key, ev.Pos, ev.Seq,
				pushed[i].Bridge, pushed[i].Key, i+1, wantSeq[i])
		}
	}
}

// TestPumpMergesWhileConsumerLags: with batching, deltas that wait behind
// a consumer that does not read still merge, and nothing is lost.
func TestPumpMergesWhileConsumerLags(t *testing.T) {
	h := NewHost(nil)
	defer h.Close()
	h.events.push(Event{Bridge: "a", Key: "k", Kind: KindTurnStart})
	first := <-h.Events() // the pump now waits on the next delivery or take
	const deltas = 1000
	for i := range deltas {
		h.events.push(Event{Bridge: "a", Key: "k", Kind: KindText, MessageID: "m", Text: fmt.Sprint(i % 10)})
	}
	h.events.push(Event{Bridge: "a", Key: "k", Kind: KindTurnEnd})
	var text strings.Builder
	var events int
	for ev := range h.Events() {
		events++
		text.WriteString(ev.Text)
		if ev.Seq != first.Seq+uint64(events) || ev.Pos != first.Pos+uint64(events) {
			t.Fatalf("event %d: seq %d pos %d: numbering has a gap", events, ev.Seq, ev.Pos)
		}
		if ev.Kind == KindTurnEnd {
			break
		}
	}
	if text.Len() != deltas {
		t.Fatalf("text delivered %d bytes, want %d", text.Len(), deltas)
	}
	if events-1 > deltas/2 {
		t.Errorf("%d text events for %d deltas: waiting deltas did not merge", events-1, deltas)
	}
}

// TestPumpJournalsNumberedBatchesInOrder: with a journal, Pos continues
// after its last position and each key's Seq after its last Seq; batches
// reach Append numbered and in order, exactly the events delivered, all
// before Shutdown returns.
func TestPumpJournalsNumberedBatchesInOrder(t *testing.T) {
	j := newMemJournal()
	j.Append(context.Background(), []Event{
		{Pos: 10, Key: "old", Seq: 7, Bridge: "a", Kind: KindNotice},
		{Pos: 11, Key: "k1", Seq: 4, Bridge: "a", Kind: KindNotice},
	})
	h, rec := newHostAndRecorder(t, &HostOptions{Journal: j})
	const n = 2000
	for i := range n {
		ev := Event{Bridge: "a", Key: "k1", Kind: KindNotice, Text: fmt.Sprint(i)}
		if i%2 == 1 {
			ev.Key = "k2"
		}
		h.events.push(ev)
	}
	if err := h.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	stored, batches := j.stored()
	waitfor.Closed(t, rec.done, "the recorder to have read every event")
	delivered := rec.snapshot()
	if len(stored) != n+2 || len(delivered) != n {
		t.Fatalf("journal holds %d events, %d delivered; want %d and %d", len(stored), len(delivered), n+2, n)
	}
	seq := map[string]uint64{"k1": 4, "k2": 0}
	for i, ev := range stored[2:] {
		seq[ev.Key]++
		if ev.Pos != uint64(12+i) || ev.Seq != seq[ev.Key] || ev.Text != fmt.Sprint(i) {
			t.Fatalf("journaled event %d: pos %d seq %d text %q; want pos %d seq %d", i, ev.Pos, ev.Seq, ev.Text, 12+i, seq[ev.Key])
		}
		if d := delivered[i]; d.Pos != ev.Pos || d.Seq != ev.Seq || d.Text != ev.Text {
			t.Fatalf("delivered event %d (pos %d) differs from the journaled one (pos %d)", i, d.Pos, ev.Pos)
		}
	}
	for i, b := range batches[1:] {
		if len(b) == 0 || len(b) > pumpBatch {
			t.Errorf("batch %d has %d events", i, len(b))
		}
	}
}

// TestPumpJournalFailureReportedOnce: a failing Append does not stop
// delivery; one error event (ErrJournal) and one log record report the
// streak, and once the journal works again it receives what failed, so it
// has no hole.
func TestPumpJournalFailureReportedOnce(t *testing.T) {
	j := newMemJournal()
	var logs bytes.Buffer
	h := NewHost(&HostOptions{Journal: j, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer h.Close()
	j.setFail(errJournalDown)
	var got []Event
	next := func() Event {
		ev := <-h.Events()
		got = append(got, ev)
		return ev
	}
	h.events.push(Event{Bridge: "a", Key: "k", Kind: KindNotice, Text: "1"})
	next()
	report := next()
	if report.Kind != KindError || report.Bridge != "" || !errors.Is(report.Err, ErrJournal) || !errors.Is(report.Err, errJournalDown) {
		t.Fatalf("after a failed append: %s %v, want an agent-wide error event wrapping ErrJournal", report.Kind, report.Err)
	}
	for _, text := range []string{"2", "3"} {
		h.events.push(Event{Bridge: "a", Key: "k", Kind: KindNotice, Text: text})
		if ev := next(); ev.Text != text {
			t.Fatalf("got %s %q, want notice %q (one report per streak)", ev.Kind, ev.Text, text)
		}
	}
	j.setFail(nil)
	h.events.push(Event{Bridge: "a", Key: "k", Kind: KindNotice, Text: "4"})
	next()
	if err := h.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	stored, _ := j.stored()
	if len(stored) != len(got) {
		t.Fatalf("journal holds %d events, %d were delivered", len(stored), len(got))
	}
	for i := range stored {
		if stored[i].Pos != got[i].Pos || stored[i].Pos != uint64(i+1) {
			t.Fatalf("journaled event %d has pos %d, delivered %d", i, stored[i].Pos, got[i].Pos)
		}
	}
	if c := strings.Count(logs.String(), "journal append failed"); c != 1 {
		t.Errorf("%d failure log records, want 1:\n%s", c, logs.String())
	}
	if !strings.Contains(logs.String(), "journal recovered") {
		t.Errorf("no recovery log record:\n%s", logs.String())
	}
}
