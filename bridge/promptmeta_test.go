package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/schematest"
	"github.com/acphost/acphost/journal"
)

// traceMeta is W3C trace context as ACP's meta propagation convention
// puts it: root keys of _meta.
const traceMeta = `{"baggage":"user=alice","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"vendor=opaque"}`

// A prompt's _meta set with WithPromptMeta goes on the wire in
// session/prompt (Prompt's, and the prompt a Steer fallback queues), is
// carried by turn_start, and is still in the journal for a Host and
// Bridge opened again after the app restarted.
func TestPromptMetaReachesTheAgentAndTheJournal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "journal.db")
	agent := &acptest.Transport{Script: acptest.Script{Prompts: []acptest.Turn{
		{Match: "hold", Steps: []acptest.Step{{WaitCancel: true}}},
	}}}
	withMeta := bridge.WithPromptMeta(ctx, json.RawMessage(traceMeta))

	turnEnds := make(chan struct{}, 16)
	run := func(use func(*bridge.Bridge, *bridge.Session)) {
		t.Helper()
		db, err := journal.Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		host := bridge.NewHost(&bridge.HostOptions{Journal: db})
		drained := make(chan struct{})
		go func() {
			defer close(drained)
			for ev := range host.Events() {
				if ev.Kind == bridge.KindTurnEnd {
					turnEnds <- struct{}{}
				}
			}
		}()
		defer func() {
			if err := host.Shutdown(ctx); err != nil {
				t.Errorf("Shutdown: %v", err)
			}
			<-drained
		}()
		b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: agent})
		if err != nil {
			t.Fatal(err)
		}
		s, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: "/w", Key: "traced"})
		if err != nil {
			t.Fatal(err)
		}
		use(b, s)
	}
	run(func(_ *bridge.Bridge, s *bridge.Session) {
		if _, err := s.Prompt(withMeta, acpclient.TextBlock("traced")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Prompt(ctx, acpclient.TextBlock("plain")); err != nil {
			t.Fatal(err)
		}
		// No turn runs: the fallback queues the text, and the queue runs it.
		if via, err := s.Steer(withMeta, "steered", bridge.SteerQueue); err != nil || via != bridge.SteerQueue {
			t.Fatalf("Steer = %q, %v", via, err)
		}
		if _, err := agent.Agents()[0].WaitFor(ctx, promptOf("steered")); err != nil {
			t.Fatalf("waiting for the steered prompt: %v", err)
		}
		if _, err := s.Enqueue(withMeta, acpclient.TextBlock("queued")); err != nil {
			t.Fatal(err)
		}
		if _, err := agent.Agents()[0].WaitFor(ctx, promptOf("queued")); err != nil {
			t.Fatalf("waiting for the queued prompt: %v", err)
		}
		// A prompt still queued when the app stops keeps its meta in the
		// session's record. It is queued behind a turn that holds the
		// session, begun once the four turns so far have ended.
		for i := range 4 {
			select {
			case <-turnEnds:
			case <-ctx.Done():
				t.Fatalf("waiting for turn_end %d of 4: %v", i+1, ctx.Err())
			}
		}
		held := make(chan struct{})
		go func() {
			defer close(held)
			if _, err := s.Prompt(ctx, acpclient.TextBlock("hold")); errors.Is(err, bridge.ErrBusy) {
				t.Errorf("the held prompt: %v", err)
			}
		}()
		if _, err := agent.Agents()[0].WaitFor(ctx, promptOf("hold")); err != nil {
			t.Fatalf("waiting for the held prompt: %v", err)
		}
		if _, err := s.Enqueue(withMeta, acpclient.TextBlock("left queued")); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { <-held })
		// Not an object: refused before anything is sent.
		bad := bridge.WithPromptMeta(ctx, json.RawMessage(`["traceparent"]`))
		if _, err := s.Prompt(bad, acpclient.TextBlock("bad")); err == nil || !strings.Contains(err.Error(), "_meta must be a JSON object") {
			t.Errorf("Prompt with an array as _meta: %v, want a refusal naming _meta", err)
		}
	})
	v := schematest.Load(t)
	sent := map[string]json.RawMessage{}
	for _, m := range agent.Agents()[0].Received() {
		if m.Method != "session/prompt" {
			continue
		}
		line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "method": m.Method, "params": m.Params})
		if err := v.ValidateClientMessage(line); err != nil {
			t.Errorf("session/prompt against the schema: %v\n%s", err, line)
		}
		var p struct {
			Prompt []struct{ Text string } `json:"prompt"`
			Meta   json.RawMessage         `json:"_meta"`
		}
		json.Unmarshal(m.Params, &p)
		sent[p.Prompt[0].Text] = p.Meta
	}
	want := map[string]string{"traced": traceMeta, "plain": "", "steered": traceMeta, "queued": traceMeta, "hold": ""}
	if len(sent) != len(want) {
		t.Errorf("prompts sent %v, want %v", keysOf(sent), want)
	}
	for text, meta := range want {
		if got := string(sent[text]); !sameJSON(got, meta) {
			t.Errorf("session/prompt %q _meta = %s, want %s", text, got, meta)
		}
	}

	// The app restarts: a new Host and Bridge on the same journal.
	run(func(_ *bridge.Bridge, s *bridge.Session) {
		queued, _ := s.Queue()
		if len(queued) != 1 || queued[0].Text != "left queued" || !sameJSON(string(queued[0].Meta), traceMeta) {
			t.Errorf("restored queue %+v, want \"left queued\" with the trace meta", queued)
		}
	})
	db, err := journal.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	journaled := map[string]string{}
	for ev, err := range bridge.History(ctx, db, "traced") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == bridge.KindTurnStart {
			journaled[ev.Text] = string(ev.Raw)
		}
	}
	for text, meta := range want {
		if got, ok := journaled[text]; !ok || !sameJSON(got, meta) {
			t.Errorf("journaled turn_start %q meta = %q (found %v), want %s", text, got, ok, meta)
		}
	}
}

// promptOf matches the session/prompt whose first block is text.
func promptOf(text string) func(acptest.Message) bool {
	return func(m acptest.Message) bool {
		var p struct {
			Prompt []struct{ Text string } `json:"prompt"`
		}
		return m.Method == "session/prompt" && json.Unmarshal(m.Params, &p) == nil && len(p.Prompt) > 0 && p.Prompt[0].Text == text
	}
}

func sameJSON(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func keysOf(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
