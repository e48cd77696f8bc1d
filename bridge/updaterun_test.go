package bridge

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/fakeclock"
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
	(&agentClient{b: b}).SessionUpdates(context.Background(), run)
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
