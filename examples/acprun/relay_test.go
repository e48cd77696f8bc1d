package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/bridge"
)

// textAt is text event number seq of session k.
func textAt(seq uint64) bridge.Event {
	return bridge.Event{Pos: seq, Bridge: "agent-1", Key: "k", Session: "s", Seq: seq, Turn: 1, Kind: bridge.KindText,
		Time: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), Text: strings.Repeat("x", 100)}
}

// TestEventLineShownWhenIdle: a line reaches a reader of the pipe as soon
// as no further event is ready, while the stream stays open.
func TestEventLineShownWhenIdle(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	events := make(chan bridge.Event)
	out := newJSONOutput(pw)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer pw.Close()
		relayEvents(events, out, out.event)
	}()
	defer func() { close(events); <-done }()
	lines := bufio.NewReader(pr)
	for seq := uint64(1); seq <= 3; seq++ {
		events <- textAt(seq)
		if err := pr.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
			t.Skip("the pipe has no deadlines:", err)
		}
		line, err := lines.ReadBytes('\n')
		if err != nil {
			t.Fatalf("event %d: no line while the stream waits: %v", seq, err)
		}
		var ev bridge.Event
		if err := json.Unmarshal(line, &ev); err != nil || ev.Seq != seq {
			t.Fatalf("line %q (%v), want the event of seq %d", line, err, seq)
		}
	}
}

// writeCounter counts the writes made to it.
type writeCounter struct {
	bytes.Buffer
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// TestEventLinesGatheredWhileEventsPend: events that are ready one after
// another are written in few writes, every line whole and in order.
func TestEventLinesGatheredWhileEventsPend(t *testing.T) {
	const n = 500
	events := make(chan bridge.Event, n)
	for seq := uint64(1); seq <= n; seq++ {
		events <- textAt(seq)
	}
	close(events)
	var w writeCounter
	out := newJSONOutput(&w)
	relayEvents(events, out, out.event)
	out.finish()
	lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines for %d events", len(lines), n)
	}
	for i, line := range lines {
		var ev bridge.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Seq != uint64(i+1) {
			t.Fatalf("line %d: %q (%v)", i, line, err)
		}
	}
	if limit := n * len(lines[0]) / eventsBuffer * 2; w.writes > limit {
		t.Errorf("%d writes for %d lines of %d bytes, want at most %d", w.writes, n, len(lines[0]), limit)
	}
}

// TestPermissionLineShownBeforeAsking: the request is on the reader's side
// before acprun asks the user about it, even with more events pending.
func TestPermissionLineShownBeforeAsking(t *testing.T) {
	var w writeCounter
	out := newJSONOutput(&w)
	out.event(textAt(1))
	tool := &bridge.ToolCall{ID: "call_1", Title: "Write a.txt", Kind: "edit", Status: "pending"}
	perm := bridge.Event{Pos: 2, Bridge: "agent-1", Key: "k", Seq: 2, Kind: bridge.KindPermission, Tool: tool,
		Permission: &bridge.PermissionRequest{ID: "perm-1", Tool: tool}}
	out.permission(perm, func() string {
		if got := strings.Count(w.String(), "\n"); got != 2 {
			t.Errorf("%d lines written when acprun asks, want 2:\n%s", got, w.String())
		}
		return decisionAllow
	})
}
