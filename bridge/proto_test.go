package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/schematest"
	"github.com/acphost/acphost/internal/waitfor"
)

// protoConfig runs script in process, so a test can read what the agent
// received.
func protoConfig(id string, script acptest.Script) (Config, *acptest.Transport) {
	tr := &acptest.Transport{Script: script}
	return Config{ID: id, Transport: tr}, tr
}

// checkUpdatesOnWire checks that each update object, as the fake agent
// sends it, is valid (or, with valid false, invalid) against the pinned
// unstable schema, so the tests feed the bridge what agents may send.
func checkUpdatesOnWire(t *testing.T, valid bool, updates ...string) {
	t.Helper()
	v := schematest.LoadUnstable(t)
	for _, u := range updates {
		line := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":%s}}`, u)
		if err := v.ValidateAgentMessage([]byte(line)); (err == nil) != valid {
			t.Errorf("update %s: schema says %v, want valid=%v", u, err, valid)
		}
	}
}

// receivedParams returns the params of the first message of method the
// transport's first agent received, checked against the pinned schema.
func receivedParams(t *testing.T, tr *acptest.Transport, method string) json.RawMessage {
	t.Helper()
	agents := tr.Agents()
	if len(agents) == 0 {
		t.Fatalf("no agent started")
	}
	m, err := agents[0].WaitFor(waitfor.Context(t), func(m acptest.Message) bool { return m.Method == method })
	if err != nil {
		t.Fatalf("waiting for the agent to receive %s: %v", method, err)
	}
	line := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, m.Params)
	if err := schematest.LoadUnstable(t).ValidateClientMessage([]byte(line)); err != nil {
		t.Errorf("%s against the schema: %v", method, err)
	}
	return m.Params
}

// runTurn prompts s once and waits for the turn's end.
func runTurn(t *testing.T, s *Session, rec *recorder) {
	t.Helper()
	if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("go")); err != nil {
		t.Fatalf("prompt: %v", err)
	}
	rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Session == s.ID() })
}

// openProto starts a bridge on script and opens one session.
func openProto(t *testing.T, id string, script acptest.Script) (*Session, *recorder, *acptest.Transport) {
	t.Helper()
	h, rec := newHostAndRecorder(t, nil)
	cfg, tr := protoConfig(id, script)
	b, err := h.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	return s, rec, tr
}
