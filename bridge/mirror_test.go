package bridge

import (
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// mirrorScript is an agent with session modes and a "mode" config option
// for the same thing, a legacy model list and a "model" option, like qwen
// and codex: set_mode changes only the mode, set_config_option only the
// options.
var mirrorScript = acptest.Script{NewSession: acptest.NewSessionScript{
	Modes: raw(`{"currentModeId":"default","availableModes":[{"id":"default","name":"Default"},{"id":"plan","name":"Plan"},{"id":"auto-edit","name":"Auto edit"}]}`),
	ConfigOptions: raw(`[{"id":"mode","name":"Mode","category":"mode","type":"select","currentValue":"default","options":[{"value":"default","name":"Default"},{"value":"plan","name":"Plan"},{"value":"auto-edit","name":"Auto edit"}]},` +
		`{"id":"model","name":"Model","category":"model","type":"select","currentValue":"m1","options":[{"value":"m1","name":"M1"},{"value":"m2","name":"M2"}]}]`),
	Models: raw(`{"currentModelId":"m1","availableModels":[{"modelId":"m1","name":"M1"},{"modelId":"m2","name":"M2"}]}`),
}}

func currentOption(t *testing.T, opts []acpclient.ConfigOption, id string) string {
	t.Helper()
	for _, o := range opts {
		if o.ID == id {
			return o.Value
		}
	}
	t.Fatalf("no option %q in %+v", id, opts)
	return ""
}

// TestModeChangeIsVisibleEverywhere: a call that changes the agent mode,
// the model or an option that mirrors one of them leaves both views
// showing the new value at once, each reported as its event.
func TestModeChangeIsVisibleEverywhere(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), agentConfig(t, "mirror", mirrorScript))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir(), Policy: Policy{Mode: ModeFull}})
	if err != nil {
		t.Fatal(err)
	}
	lastConfig := func(desc, id, want string) {
		t.Helper()
		rec.waitFor(desc, func(ev Event) bool {
			if ev.Kind != KindConfig {
				return false
			}
			for _, o := range ev.ConfigOptions {
				if o.ID == id && o.Value == want {
					return true
				}
			}
			return false
		})
	}

	// SetAgentMode → the "mode" option.
	if err := s.SetAgentMode(ctxT(t), "plan"); err != nil {
		t.Fatal(err)
	}
	if got := currentOption(t, s.ConfigOptions(), "mode"); got != "plan" {
		t.Errorf("after SetAgentMode(plan) the mode option shows %q", got)
	}
	lastConfig("a config event with mode plan", "mode", "plan")

	// The "mode" option → AgentMode.
	if _, err := s.SetConfigOption(ctxT(t), acpclient.SetConfigOptionRequest{ConfigID: "mode", Value: "auto-edit"}); err != nil {
		t.Fatal(err)
	}
	if got := s.AgentMode(); got != "auto-edit" {
		t.Errorf("after setting the mode option to auto-edit AgentMode is %q", got)
	}
	rec.waitFor("an agent_mode event auto-edit", func(ev Event) bool { return ev.Kind == KindAgentMode && ev.AgentMode == "auto-edit" })

	// The "model" option → the legacy model list and the kept model.
	if _, err := s.SetConfigOption(ctxT(t), acpclient.SetConfigOptionRequest{ConfigID: "model", Value: "m2"}); err != nil {
		t.Fatal(err)
	}
	if m := s.Models(); m == nil || m.CurrentModelID != "m2" {
		t.Errorf("after setting the model option to m2 Models() is %+v", m)
	}
	rec.waitFor("a model event m2", func(ev Event) bool {
		return ev.Kind == KindModel && ev.Models != nil && ev.Models.CurrentModelID == "m2"
	})
	s.mu.Lock()
	kept := s.cfg.Model
	s.mu.Unlock()
	if kept != "m2" {
		t.Errorf("the model kept for reattaching is %q, want m2", kept)
	}

	// SetModel (through the option) → the legacy model list.
	if err := s.SetModel(ctxT(t), "m1"); err != nil {
		t.Fatal(err)
	}
	if m := s.Models(); m == nil || m.CurrentModelID != "m1" {
		t.Errorf("after SetModel(m1) Models() is %+v", m)
	}
	if got := currentOption(t, s.ConfigOptions(), "model"); got != "m1" {
		t.Errorf("after SetModel(m1) the model option shows %q", got)
	}
}

// TestOpenedModelIsVisibleEverywhere: the model a session opens with, set
// through the "model" option while attaching, is also the legacy list's
// current model in the session event and Models.
func TestOpenedModelIsVisibleEverywhere(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), agentConfig(t, "mirror", mirrorScript))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir(), Model: "m2", Policy: Policy{Mode: ModeFull}})
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Models(); m == nil || m.CurrentModelID != "m2" {
		t.Errorf("Models() %+v, want m2 current", m)
	}
	ev := rec.waitFor("session event", func(ev Event) bool { return ev.Kind == KindSession })
	if m := ev.SessionReady.Models; m == nil || m.CurrentModelID != "m2" {
		t.Errorf("session event's models %+v, want m2 current", m)
	}
}

// TestViewFollowsTheModel: a model event updates a SessionView's legacy
// model list, as the other mirrored views' events update theirs.
func TestViewFollowsTheModel(t *testing.T) {
	var v SessionView
	v.Apply(Event{Kind: KindSession, SessionReady: &SessionReady{Models: &acpclient.ModelState{CurrentModelID: "m1"}}})
	v.Apply(Event{Kind: KindModel, Models: &acpclient.ModelState{CurrentModelID: "m2"}})
	if v.Models == nil || v.Models.CurrentModelID != "m2" {
		t.Fatalf("view's models %+v after a model event for m2", v.Models)
	}
}
