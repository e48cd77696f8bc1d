package bridge

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/fakeclock"
	"github.com/acphost/acphost/internal/wire"
)

// countingClock counts the reads of a fake clock.
type countingClock struct {
	fakeClock
	reads atomic.Int64
}

func (c *countingClock) Now() time.Time {
	c.reads.Add(1)
	return c.fakeClock.Now()
}

// A run of text chunks delivered together reads the clock once: every
// event of the run carries that time, and nothing of the run is lost.
func TestUpdateRunReadsTheClockOnce(t *testing.T) {
	clock := &countingClock{fakeClock: fakeClock{fakeclock.New()}}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), Config{Transport: &acptest.Transport{}, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	const chunks = 100
	run := make([]*acpclient.SessionNotification, chunks)
	for i := range run {
		run[i] = &acpclient.SessionNotification{SessionID: s.ID(), Update: &acpclient.AgentMessageChunk{
			ContentChunk: acpclient.ContentChunk{Content: acpclient.TextBlock("x")}}}
	}
	clock.Advance(time.Minute) // the run's time differs from the handshake's
	at := clock.fakeClock.Now()
	clock.reads.Store(0)
	(&agentClient{b: b}).Updates(context.Background(), asRun(run))
	if n := clock.reads.Load(); n != 1 {
		t.Errorf("a run of %d chunks read the clock %d times, want once", chunks, n)
	}
	var text strings.Builder
	rec.waitFor("the run's text", func(ev Event) bool {
		if ev.Kind == KindText {
			text.WriteString(ev.Text)
			if !ev.Time.Equal(at) {
				t.Errorf("text event at %v, want the run's time %v", ev.Time, at)
			}
		}
		return text.Len() == chunks
	})
}

// deliverRun opens a session, prepares it with setup, delivers run (built
// for its id) in one Updates call or one SessionUpdate per update,
// and returns the session's events from the run, consecutive deltas that
// may have merged folded together (merging depends on the pump's timing),
// and how many replayed updates the session skipped.
func deliverRun(t *testing.T, oneByOne bool, setup func(*Session), run func(id string) []*acpclient.SessionNotification) ([]string, int) {
	t.Helper()
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), Config{Transport: &acptest.Transport{}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	setup(s)
	s.mu.Unlock()
	c := &agentClient{b: b}
	ns := run(s.ID())
	if oneByOne {
		for _, n := range ns {
			c.SessionUpdate(context.Background(), n)
		}
	} else {
		c.Updates(context.Background(), asRun(ns))
	}
	s.mu.Lock()
	s.replaying = false // the end marker below is not history to skip
	skipped := s.replaySkipped
	s.mu.Unlock()
	c.SessionUpdate(context.Background(), &acpclient.SessionNotification{SessionID: s.ID(),
		Update: &acpclient.CurrentModeUpdate{CurrentModeID: "end-of-run"}})
	rec.waitFor("the end of the run", func(ev Event) bool { return ev.AgentMode == "end-of-run" })
	var out []string
	started := false
	for _, ev := range rec.of(b.ID(), s.ID()) {
		started = started || ev.Kind == KindSession
		if !started || ev.Kind == KindSession || ev.Kind == KindAuthority {
			continue
		}
		line := fmt.Sprintf("%s msg=%q turn=%d late=%v replay=%v bridge=%s key=%v time=%v",
			ev.Kind, ev.MessageID, ev.Turn, ev.Late, ev.Replay, ev.Bridge, ev.Key != "", !ev.Time.IsZero())
		if n := len(out); n > 0 && (ev.Kind == KindText || ev.Kind == KindThinking) && strings.HasPrefix(out[n-1], line+" text=") {
			out[n-1] += ev.Text
			continue
		}
		out = append(out, line+" text="+ev.Text)
	}
	return out, skipped
}

// chunk is a text delta of kind for session id.
func chunk(id string, kind Kind, text, msg string) *acpclient.SessionNotification {
	c := acpclient.ContentChunk{Content: acpclient.TextBlock(text)}
	if msg != "" {
		c.MessageID = &msg
	}
	n := &acpclient.SessionNotification{SessionID: id}
	switch kind {
	case KindText:
		n.Update = &acpclient.AgentMessageChunk{ContentChunk: c}
	case KindThinking:
		n.Update = &acpclient.AgentThoughtChunk{ContentChunk: c}
	default:
		n.Update = &acpclient.UserMessageChunk{ContentChunk: c}
	}
	return n
}

// A run of updates delivered together yields what the same updates
// delivered one by one yield: deltas of every kind and message id, a
// non-text chunk, other updates and another session's updates between
// them, in a turn, late after one and while a replay is skipped.
func TestUpdateRunMatchesOneByOne(t *testing.T) {
	run := func(id string) []*acpclient.SessionNotification {
		image := &acpclient.SessionNotification{SessionID: id, Update: &acpclient.AgentMessageChunk{
			ContentChunk: acpclient.ContentChunk{Content: acpclient.ContentBlock{Type: acpclient.ContentImage, MimeType: "image/png", Data: "AA=="}}}}
		return []*acpclient.SessionNotification{
			chunk(id, KindText, "a", ""), chunk(id, KindText, "b", ""), chunk(id, KindText, "c", "m1"),
			chunk(id, KindThinking, "d", "m1"), chunk(id, KindThinking, "e", "m1"), chunk(id, KindUserText, "f", ""),
			image, chunk(id, KindText, "g", ""),
			{SessionID: id, Update: &acpclient.PlanUpdate{Entries: []acpclient.PlanEntry{{Content: "p"}}}},
			chunk(id, KindText, "h", ""), chunk("elsewhere", KindText, "x", ""), chunk("elsewhere", KindText, "y", ""),
			chunk(id, KindText, "i", ""), chunk(id, KindText, "j", ""),
		}
	}
	for _, tc := range []struct {
		name  string
		setup func(*Session)
	}{
		{"outside a turn", func(*Session) {}},
		{"late", func(s *Session) { s.turnsEnded, s.ctl.lastTurn = 1, 7 }},
		{"replay", func(s *Session) { s.replaying = true }},
		{"replay skipped", func(s *Session) { s.replaying, s.skipReplay = true, true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, wantSkipped := deliverRun(t, true, tc.setup, run)
			got, gotSkipped := deliverRun(t, false, tc.setup, run)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("a run yielded\n%s\nwant, as one by one,\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if gotSkipped != wantSkipped {
				t.Errorf("a run skipped %d replayed updates, one by one %d", gotSkipped, wantSkipped)
			}
		})
	}
}

// The queue merges a run of deltas pushed together exactly as it merges
// them pushed one by one: into the newest waiting event while kind,
// message and everything else match, never into a lone waiting event.
func TestPushDeltasMergesAsPushDoes(t *testing.T) {
	run := []*acpclient.SessionNotification{
		chunk("s", KindText, "a", ""), chunk("s", KindText, "b", ""), chunk("s", KindText, "c", "m1"),
		chunk("s", KindText, "c2", "m1"), chunk("s", KindThinking, "d", "m1"), chunk("s", KindThinking, "e", "m1"),
		chunk("s", KindText, "f", ""), chunk("s", KindUserText, "g", ""), chunk("s", KindUserText, "h", ""),
		chunk("s", KindText, "i", ""), chunk("s", KindText, "j", ""),
	}
	tmpl := Event{Bridge: "b", Key: "k", Session: "s", Turn: 2}
	events := func(q *eventQueue) []string {
		var out []string
		for _, ev := range q.take(nil, 100) {
			out = append(out, fmt.Sprintf("%s/%s/%s/%d:%s", ev.Kind, ev.MessageID, ev.Key, ev.Turn, ev.Text))
		}
		return out
	}
	oneByOne, together := newEventQueue(100, 0), newEventQueue(100, 0)
	for _, q := range []*eventQueue{oneByOne, together} {
		q.push(Event{Kind: KindText, Key: "other", Text: "o"}) // waiting, of another session
	}
	var ds []wire.TextDelta
	for _, n := range run {
		d, _ := deltaOf(&runUpdate{Note: n})
		ds = append(ds, d)
		ev := tmpl
		ev.Kind, ev.Text, ev.MessageID = deltaKind(d.Kind), d.Text, d.MessageID
		oneByOne.push(ev)
	}
	if !together.pushDeltas(&tmpl, ds) {
		t.Fatal("pushDeltas reported a closed queue")
	}
	want, got := events(oneByOne), events(together)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("a run pushed together queued\n%s\nwant, as one by one,\n%s", strings.Join(got, " "), strings.Join(want, " "))
	}
	if len(want) != 8 { // o, ab, cc2, de, f, g, h, ij
		t.Errorf("one by one queued %d events, want 8: %s", len(want), strings.Join(want, " "))
	}
}

// asRun is ns as the run the connection delivers.
func asRun(ns []*acpclient.SessionNotification) []runUpdate {
	run := make([]runUpdate, len(ns))
	for i, n := range ns {
		run[i].Note = n
	}
	return run
}
