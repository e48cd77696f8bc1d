package profiles

import (
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/bridgetest"
	"github.com/acphost/acphost/internal/fakebin"
)

// TestQwenModeAndModelNotifications: Qwen Code's own notifications (with
// and without the underscore) set the session's mode and model and arrive
// as agent_mode and model events.
func TestQwenModeAndModelNotifications(t *testing.T) {
	notify := func(method, params string) acptest.Step {
		return acptest.Step{Notify: &acptest.Notification{Method: method, Params: bridgetest.Raw(params)}}
	}
	script := acptest.Script{
		NewSession: acptest.NewSessionScript{
			SessionIDs: []string{"q1"},
			Modes:      bridgetest.Raw(`{"currentModeId":"default","availableModes":[{"id":"default","name":"Default"},{"id":"plan","name":"Plan"}]}`),
			Models:     bridgetest.Raw(`{"currentModelId":"qwen3","availableModels":[{"modelId":"qwen3","name":"Qwen 3"},{"modelId":"coder","name":"Coder"}]}`),
		},
		Prompts: []acptest.Turn{{Steps: []acptest.Step{
			notify("qwen/notify/session/mode-update", `{"v":1,"sessionId":"q1","currentModeId":"plan"}`),
			notify("_qwen/notify/session/model-update", `{"v":1,"sessionId":"q1","currentModelId":"coder"}`),
			{Text: "done"},
		}}},
	}
	h, rec := bridgetest.NewHost(t, nil)
	in := fakebin.Install(t, t.TempDir(), "qwen", script, "")
	b, err := h.StartProfile(bridgetest.Context(t), Qwen, bridge.LaunchOptions{Binary: in.Path}, bridge.Config{ID: "qwen"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(bridgetest.Context(t), acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	mode := rec.WaitFor("agent_mode", func(ev bridge.Event) bool { return ev.Kind == bridge.KindAgentMode })
	model := rec.WaitFor("model", func(ev bridge.Event) bool { return ev.Kind == bridge.KindModel })
	if mode.AgentMode != "plan" || s.AgentMode() != "plan" || mode.Turn != 1 {
		t.Errorf("agent_mode %q (turn %d), AgentMode %q", mode.AgentMode, mode.Turn, s.AgentMode())
	}
	if model.Models.CurrentModelID != "coder" || s.Models().CurrentModelID != "coder" || len(s.Models().AvailableModels) != 2 {
		t.Errorf("model event %+v, Models %+v", model.Models, s.Models())
	}
}
