package bridge

import (
	"context"
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/schematest"
	"github.com/acphost/acphost/internal/waitfor"
)

// TestElicitationComplete: elicitation/complete closes the url
// elicitation it names with a typed event on its session: one still
// waiting is settled as accepted by the host first, one the user answered
// is only closed; an unknown id is passed on as ext.
func TestElicitationComplete(t *testing.T) {
	const create1 = `{"jsonrpc":"2.0","id":"ask-raw","method":"elicitation/create","params":{"sessionId":"sess_el","mode":"url","message":"Sign in","url":"https://tracker.example/login","elicitationId":"e-1"}}`
	const params2 = `{"sessionId":"sess_el","mode":"url","message":"Authorize","url":"https://tracker.example/oauth","elicitationId":"e-2"}`
	complete := func(id string) string { return `{"elicitationId":"` + id + `"}` }
	v := schematest.LoadUnstable(t)
	for _, line := range []string{create1, `{"jsonrpc":"2.0","id":2,"method":"elicitation/create","params":` + params2 + `}`,
		`{"jsonrpc":"2.0","method":"elicitation/complete","params":` + complete("e-1") + `}`} {
		if err := v.ValidateAgentMessage([]byte(line)); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
	script := acptest.Script{
		NewSession: acptest.NewSessionScript{SessionIDs: []string{"sess_el"}},
		Prompts: []acptest.Turn{{Steps: []acptest.Step{
			{Raw: create1 + "\n"}, // not waited on: it completes while it waits on the user
			{Notify: &acptest.Notification{Method: "elicitation/complete", Params: raw(complete("e-1"))}},
			{Request: &acptest.Request{Method: "elicitation/create", Params: raw(params2)}},
			{Notify: &acptest.Notification{Method: "elicitation/complete", Params: raw(complete("e-2"))}},
			{Notify: &acptest.Notification{Method: "elicitation/complete", Params: raw(complete("e-9"))}},
			{Text: "still here"},
		}}},
	}
	h, rec := newHostAndRecorder(t, nil)
	rec.OnEach(func(ev Event) {
		if ev.Kind == KindElicitation && ev.Elicitation.ElicitationID == "e-2" {
			ev.Elicitation.Accept(nil)
		}
	})
	cfg, _ := protoConfig("el", script)
	cfg.ElicitationModes = []string{"form", "url"}
	b, err := h.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	runTurn(t, s, rec)
	var got []string
	var view SessionView
	for _, ev := range rec.snapshot() {
		if ev.Bridge != "el" {
			continue
		}
		if ev.Session == s.ID() {
			view.Apply(ev)
		}
		switch ev.Kind {
		case KindElicitation, KindElicitationComplete:
			got = append(got, string(ev.Kind)+" "+ev.Elicitation.ElicitationID+" "+ev.Session)
		case KindDecision:
			got = append(got, "decision "+ev.Decision.Outcome+" by "+ev.Decision.By)
		case KindExt:
			got = append(got, "ext "+ev.Method+" "+string(ev.Raw))
		case KindText:
			got = append(got, "text "+ev.Text)
		}
	}
	want := []string{
		"elicitation e-1 sess_el", "decision accepted by host", "elicitation_complete e-1 sess_el",
		"elicitation e-2 sess_el", "decision accepted by app",
		`text request elicitation/create: result {"action":"accept"}`,
		"elicitation_complete e-2 sess_el",
		`ext elicitation/complete {"elicitationId":"e-9"}`,
		"text still here",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(view.Pending) != 0 {
		t.Errorf("view still has pending requests %+v", view.Pending)
	}
}
