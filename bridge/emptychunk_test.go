package bridge

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// TestEmptyChunksAreDropped: text and thought chunks with empty text
// (claude sends one before its reply) reach the app as no event, whether
// they are decoded as lean deltas, alone or in runs, or as full
// notifications (a _meta on the block). The text around them arrives.
func TestEmptyChunksAreDropped(t *testing.T) {
	empty := func(kind, extra string) acptest.Step {
		return acptest.Step{Update: json.RawMessage(`{"sessionUpdate":"` + kind + `","content":{"type":"text","text":""` + extra + `}}`)}
	}
	withID := func(kind, id string) acptest.Step {
		return acptest.Step{Update: json.RawMessage(`{"sessionUpdate":"` + kind + `","messageId":"` + id + `","content":{"type":"text","text":""}}`)}
	}
	steps := []acptest.Step{
		empty("agent_message_chunk", ""),
		{Text: "one"},
		empty("agent_thought_chunk", ""),
		empty("agent_message_chunk", `,"_meta":{"x":1}`),
		empty("agent_thought_chunk", `,"_meta":{"x":1}`),
		withID("agent_message_chunk", "m1"),
		{Text: "two"},
		{Sleep: acptest.Duration(20e6)}, // what follows comes alone
		empty("agent_message_chunk", `,"_meta":{"x":1}`),
		{Sleep: acptest.Duration(20e6)},
		empty("agent_thought_chunk", ""),
	}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), Config{ID: "empty", Transport: &acptest.Transport{Script: acptest.Script{
		Prompts: []acptest.Turn{{Match: "go", Steps: steps}}}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(context.Background(), SessionConfig{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("turn_end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	var text string
	for _, ev := range rec.of("empty", s.ID()) {
		switch ev.Kind {
		case KindText, KindThinking, KindExt:
			if ev.Text == "" {
				t.Errorf("an empty chunk reached the app: %+v", ev)
			}
			text += ev.Text
		}
	}
	if text != "onetwo" {
		t.Errorf("text %q, want %q", text, "onetwo")
	}
}
