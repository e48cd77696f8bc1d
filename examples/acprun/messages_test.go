package main

import (
	"bytes"
	"io"
	"testing"

	"github.com/acphost/acphost/bridge"
)

// TestHumanSeparatesMessages: the human output neither leaves the blank
// lines of an agent that starts its reply with a newline after a status
// line, nor glues two messages of one turn together.
func TestHumanSeparatesMessages(t *testing.T) {
	tool := &bridge.ToolCall{ID: "t1", Title: "Write a.txt", Kind: "edit", Status: "pending"}
	text := func(id, s string) bridge.Event {
		return bridge.Event{Kind: bridge.KindText, Turn: 1, MessageID: id, Text: s}
	}
	tests := []struct {
		name   string
		events []bridge.Event
		want   string
	}{
		{"newline after a decision", []bridge.Event{
			{Kind: bridge.KindDecision, Decision: &bridge.Decision{Outcome: "rejected", By: "policy"}},
			text("", "\n"), text("", "\nLeft it alone.\n"),
		}, "  rejected by policy\nLeft it alone.\n"},
		{"newline after a tool row", []bridge.Event{
			{Kind: bridge.KindToolStart, Turn: 1, Tool: tool}, text("", "\n\nWrote it."),
		}, "○ Write a.txt (edit) pending\nWrote it.\n"},
		{"two messages", []bridge.Event{
			text("m1", "Looking."), text("m1", " Found it."), text("m2", "Here is the fix."),
		}, "Looking. Found it.\n\nHere is the fix.\n"},
		{"two messages, the first ending its line", []bridge.Event{
			text("m1", "One.\n"), text("m2", "\nTwo.\n"),
		}, "One.\n\nTwo.\n"},
		{"two thoughts", []bridge.Event{
			{Kind: bridge.KindThinking, MessageID: "r1", Text: "a"}, {Kind: bridge.KindThinking, MessageID: "r2", Text: "b"},
		}, "thinking: a\n\nthinking: b\n"},
		{"a newline inside a message stays", []bridge.Event{
			text("m1", "One.\n"), text("m1", "\nTwo."),
		}, "One.\n\nTwo.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			h := newHuman(&out, io.Discard, false, palette{})
			for _, ev := range tt.events {
				h.event(ev)
			}
			h.finish()
			if got := out.String(); got != tt.want {
				t.Errorf("output\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
