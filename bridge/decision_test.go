package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/waitfor"
)

// decisionsOf returns the decision events among events, by request id.
func decisionsOf(t *testing.T, events []Event) map[string]Decision {
	t.Helper()
	out := map[string]Decision{}
	for _, ev := range events {
		if ev.Kind != KindDecision {
			continue
		}
		if _, dup := out[ev.Decision.Request]; dup {
			t.Errorf("two decisions for %s", ev.Decision.Request)
		}
		out[ev.Decision.Request] = *ev.Decision
	}
	return out
}

// TestEveryPermissionGetsOneDecision: the policy's own answers are
// recorded (a permission event, already answered, then a decision naming
// the rule), and so are the app's.
func TestEveryPermissionGetsOneDecision(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Permission: &acptest.Permission{ToolCall: raw(`{"toolCallId":"t1","title":"rm"}`)}},
	}}}}
	tests := []struct {
		name   string
		policy Policy
		app    func(*PermissionRequest)
		want   Decision
	}{
		{"full", Policy{Mode: ModeFull}, nil, Decision{Outcome: "allowed", OptionID: "allow", By: "policy", Rule: "Full mode allows once"}},
		{"ask", Policy{Mode: ModeAsk}, nil, Decision{Outcome: "cancelled", By: "policy", Rule: "Ask mode cancels permission requests"}},
		{"plan", Policy{Mode: ModePlan}, nil, Decision{Outcome: "cancelled", By: "policy", Rule: "Plan mode cancels permission requests"}},
		{"read-only", Policy{Mode: ModeFull, ReadOnly: true}, nil, Decision{Outcome: "cancelled", By: "policy", Rule: "read-only tool policy"}},
		{"app allows", Policy{Mode: ModeBuild}, func(p *PermissionRequest) { p.Allow() }, Decision{Outcome: "allowed", OptionID: "allow", By: "app"}},
		{"app rejects", Policy{Mode: ModeBuild}, func(p *PermissionRequest) { p.Reject() }, Decision{Outcome: "rejected", OptionID: "reject", By: "app"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, rec := newHostAndRecorder(t, nil)
			rec.setPermissionAnswer(tt.app)
			id := fmt.Sprintf("d%d", i)
			b, _ := h.Start(ctxT(t), agentConfig(t, id, script))
			s, _ := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Policy: tt.policy})
			if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("x")); err != nil {
				t.Fatal(err)
			}
			rec.waitFor("decision", func(ev Event) bool { return ev.Kind == KindDecision })
			var perm *PermissionRequest
			permAt, decAt := -1, -1
			for i, ev := range rec.of(id, s.ID()) {
				switch ev.Kind {
				case KindPermission:
					perm, permAt = ev.Permission, i
				case KindDecision:
					decAt = i
				}
			}
			if perm == nil || permAt > decAt {
				t.Fatalf("permission event at %d, decision at %d; events %s", permAt, decAt, rec.summary())
			}
			if perm.Tool.ID != "t1" || perm.Tool.Title != "rm" {
				t.Errorf("permission event's tool %+v", perm.Tool)
			}
			tt.want.Request, tt.want.Type = perm.ID, "permission"
			if got := decisionsOf(t, rec.of(id, s.ID())); len(got) != 1 || got[perm.ID] != tt.want {
				t.Errorf("decisions %+v, want %+v", got, tt.want)
			}
			if tt.app == nil {
				if err := perm.Allow(); err != ErrAlreadyAnswered {
					t.Errorf("the app could still answer a policy decision: %v", err)
				}
			}
		})
	}
}

// TestAbandonedRequestsAreDecidedByTheHost: a question left open when the
// bridge closes is recorded as cancelled by the host, with the reason.
func TestAbandonedRequestsAreDecidedByTheHost(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Request: &acptest.Request{Method: "elicitation/create", Params: raw(`{"mode":"form","message":"name?","requestedSchema":{"type":"object","properties":{}}}`)}},
	}}}}
	h, rec := newHostAndRecorder(t, nil)
	cfg := agentConfig(t, "el", script)
	cfg.ElicitationModes = []string{"form"}
	b, _ := h.Start(ctxT(t), cfg)
	s, _ := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	go s.Prompt(waitfor.Context(t), acpclient.TextBlock("x"))
	q := rec.waitFor("question", func(ev Event) bool { return ev.Kind == KindElicitation })
	b.Close()
	d := rec.waitFor("decision", func(ev Event) bool { return ev.Kind == KindDecision })
	want := Decision{Request: q.Elicitation.ID, Type: "elicitation", Outcome: "cancelled", By: "host", Rule: "bridge closed"}
	if *d.Decision != want {
		t.Errorf("decision %+v, want %+v", *d.Decision, want)
	}
}

// TestPendingRequestsKeepArrivalOrder: the registry lists requests oldest
// first, however many wait and whichever were answered.
func TestPendingRequestsKeepArrivalOrder(t *testing.T) {
	var p pendingRequests
	var want []waiter
	for i := range 40 {
		r := &PermissionRequest{userRequest: newUserRequest(), ID: fmt.Sprint(i)}
		p.add(r.ID, r)
		if i%3 == 0 {
			p.remove(r.ID)
			continue
		}
		want = append(want, r)
	}
	got := p.all()
	if len(got) != len(want) {
		t.Fatalf("%d pending, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("pending[%d] is %s, want %s", i, got[i].(*PermissionRequest).ID, want[i].(*PermissionRequest).ID)
		}
	}
}

// TestInitializeCarriesTheAppsCapabilityMeta: Config's _meta objects reach
// initialize, merged with the bridge's own terminal-auth flag.
func TestInitializeCarriesTheAppsCapabilityMeta(t *testing.T) {
	h, _ := newHostAndRecorder(t, nil)
	cfg, record, _ := recordedAgent(t, "meta", acptest.Script{})
	cfg.ClientCapabilitiesMeta = raw(`{"vendor.example/feature":{"on":true}}`)
	cfg.AuthCapabilitiesMeta = raw(`{"gateway":true}`)
	cfg.TerminalLogin = func(context.Context, TerminalLogin) error { return nil }
	b, err := h.Start(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	msgs, err := acptest.ReadRecord(record)
	if err != nil {
		t.Fatal(err)
	}
	var init struct {
		ClientCapabilities struct {
			Meta map[string]any `json:"_meta"`
			Auth struct {
				Terminal bool           `json:"terminal"`
				Meta     map[string]any `json:"_meta"`
			} `json:"auth"`
		} `json:"clientCapabilities"`
	}
	if len(msgs) == 0 || msgs[0].Method != "initialize" || json.Unmarshal(msgs[0].Params, &init) != nil {
		t.Fatalf("no initialize recorded: %+v", msgs)
	}
	caps := init.ClientCapabilities
	if caps.Meta["terminal-auth"] != true || caps.Meta["vendor.example/feature"] == nil {
		t.Errorf("clientCapabilities._meta %v", caps.Meta)
	}
	if !caps.Auth.Terminal || caps.Auth.Meta["gateway"] != true {
		t.Errorf("clientCapabilities.auth %+v", caps.Auth)
	}
}

// TestBadCapabilityMetaFailsTheStart: _meta must be a JSON object.
func TestBadCapabilityMetaFailsTheStart(t *testing.T) {
	h, _ := newHostAndRecorder(t, nil)
	cfg, _, _ := recordedAgent(t, "badmeta", acptest.Script{})
	cfg.AuthCapabilitiesMeta = raw(`[1]`)
	if _, err := h.Start(ctxT(t), cfg); err == nil {
		t.Fatal("a non-object _meta was accepted")
	}
}
