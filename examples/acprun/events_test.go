package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/floodagent"
)

// TestEventsAreTheBridgeForm: a --events line is json.Marshal of the
// bridge's Event, nothing renamed or added: the session event keeps its
// kind, todos stay todos, a permission carries no decision of acprun's, and
// the agent's own mode stays agentMode.
func TestEventsAreTheBridgeForm(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	tool := &bridge.ToolCall{ID: "call_1", Title: "Write a.txt", Kind: "edit", Status: "pending"}
	events := []bridge.Event{
		{Pos: 1, Bridge: "agent-1", Key: "k", Session: "s", Seq: 1, Kind: bridge.KindSession, Time: at, SessionReady: &bridge.SessionReady{Resumed: true}},
		{Pos: 2, Bridge: "agent-1", Key: "k", Session: "s", Seq: 2, Turn: 1, Kind: bridge.KindAgentMode, Time: at, AgentMode: "code"},
		{Pos: 3, Bridge: "agent-1", Key: "k", Session: "s", Seq: 3, Turn: 1, Kind: bridge.KindTodos, Time: at, Todos: []bridge.Todo{{Content: "x", Status: "pending"}}},
		{Pos: 4, Bridge: "agent-1", Key: "k", Session: "s", Seq: 4, Turn: 1, Kind: bridge.KindTurnEnd, Time: at,
			Err: &acpclient.CallError{Method: "session/prompt", Err: &acpclient.Error{Code: -32603, Message: "boom"}}},
	}
	var out bytes.Buffer
	o := newJSONOutput(&out)
	for _, ev := range events {
		o.event(ev)
	}
	decided := false
	perm := bridge.Event{Pos: 5, Bridge: "agent-1", Seq: 5, Kind: bridge.KindPermission, Time: at, Tool: tool,
		Permission: &bridge.PermissionRequest{ID: "perm-1", Tool: tool}}
	o.permission(perm, func() string { decided = true; return decisionAllow })
	if !decided {
		t.Error("permission did not decide")
	}
	events = append(events, perm)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(events) {
		t.Fatalf("%d lines for %d events:\n%s", len(lines), len(events), out.String())
	}
	for i, ev := range events {
		want, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if lines[i] != string(want) {
			t.Errorf("line %d:\n got %s\nwant %s", i, lines[i], want)
		}
	}
	if !strings.Contains(lines[0], `"kind":"session"`) || !strings.Contains(lines[2], `"kind":"todos"`) ||
		!strings.Contains(lines[3], `"error":{"message":"acpclient: session/prompt: boom (code -32603)","code":-32603}`) ||
		strings.Contains(lines[4], "decision") {
		t.Errorf("lines do not keep the bridge's kinds, error or permission:\n%s", out.String())
	}
}

// TestEventsReportAnEventThatCannotEncode: an event that does not encode
// (a provider hook's invalid raw JSON) still gives a line: an error event
// saying why, in the same session.
func TestEventsReportAnEventThatCannotEncode(t *testing.T) {
	var out bytes.Buffer
	o := newJSONOutput(&out)
	o.event(bridge.Event{Bridge: "agent-1", Session: "s", Seq: 3, Kind: bridge.KindExt, Raw: json.RawMessage(`{broken`)})
	o.finish()
	var ev bridge.Event
	if err := json.Unmarshal(out.Bytes(), &ev); err != nil {
		t.Fatalf("%q: %v", out.String(), err)
	}
	var e *bridge.EventError
	if ev.Kind != bridge.KindError || ev.Session != "s" || ev.Seq != 3 || !errors.As(ev.Err, &e) || !strings.Contains(e.Message, "invalid") {
		t.Errorf("line %s", out.String())
	}
}

// TestHostKeepsNoSubscriberTail: acprun reads its Host's events from
// Events only, so the Host keeps no tail of them for subscribers; with no
// journal to fall back on, a subscription from the start finds its history
// gone once more than one event was published.
func TestHostKeepsNoSubscriberTail(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	host := bridge.NewHost(hostOptions(nil))
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for range host.Events() {
		}
	}()
	br, err := host.Start(ctx, bridge.Config{Transport: &floodagent.Transport{Chunks: 3}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := br.OpenSession(ctx, bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctx, acpclient.TextBlock("flood")); err != nil {
		t.Fatal(err)
	}
	for _, err := range host.Subscribe(ctx, bridge.Cursor{}) {
		if !errors.Is(err, bridge.ErrHistoryGone) {
			t.Fatalf("subscription from the start: %v, want the history gone (no tail kept)", err)
		}
		break
	}
	if err := host.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	<-drained
}
