package crewcoder

import (
	"reflect"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/bridgetest"
)

// toolNames runs one turn of tool calls and returns "id:name" at each
// tool_end.
func toolNames(t *testing.T, start func(*bridge.Host, acptest.Script) *bridge.Bridge, steps []acptest.Step) []string {
	t.Helper()
	h, rec := bridgetest.NewHost(t, nil)
	script := crewCoderScript()
	script.Prompts = []acptest.Turn{{Steps: steps}}
	b := start(h, script)
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(bridgetest.Context(t), acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	rec.WaitFor("turn end", func(ev bridge.Event) bool { return ev.Kind == bridge.KindTurnEnd })
	var out []string
	for _, ev := range rec.Of(b.ID(), s.ID()) {
		if ev.Kind == bridge.KindToolEnd {
			out = append(out, ev.Tool.ID+":"+ev.Tool.Name)
		}
	}
	return out
}

var titleNameSteps = []acptest.Step{
	// An older stream: the title is the name, nothing else says it.
	bridgetest.Update(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"read_file","kind":"read","status":"pending"}`),
	bridgetest.Update(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`),
	// A human title gives no name.
	bridgetest.Update(`{"sessionUpdate":"tool_call","toolCallId":"t2","title":"Read main.go","kind":"read","status":"pending"}`),
	bridgetest.Update(`{"sessionUpdate":"tool_call_update","toolCallId":"t2","status":"completed"}`),
	// _meta wins over the title.
	bridgetest.Update(`{"sessionUpdate":"tool_call","toolCallId":"t3","title":"think","kind":"think","status":"pending","_meta":{"crewcoder/tool":{"name":"crewcoder_clarify"}}}`),
	bridgetest.Update(`{"sessionUpdate":"tool_call_update","toolCallId":"t3","status":"completed"}`),
	// ACP's name wins over the title, also when it comes later.
	bridgetest.Update(`{"sessionUpdate":"tool_call","toolCallId":"t4","title":"edit","kind":"edit","status":"pending"}`),
	bridgetest.Update(`{"sessionUpdate":"tool_call_update","toolCallId":"t4","name":"apply_patch","status":"in_progress"}`),
	bridgetest.Update(`{"sessionUpdate":"tool_call_update","toolCallId":"t4","status":"completed"}`),
	// _meta arriving after a title-derived name replaces it.
	bridgetest.Update(`{"sessionUpdate":"tool_call","toolCallId":"t5","title":"bash","kind":"execute","status":"pending"}`),
	bridgetest.Update(`{"sessionUpdate":"tool_call_update","toolCallId":"t5","status":"completed","_meta":{"crewcoder/tool":{"name":"TaskCreate"}}}`),
	// A human title after the bare one keeps the name read before.
	bridgetest.Update(`{"sessionUpdate":"tool_call","toolCallId":"t6","title":"grep","kind":"search","status":"pending"}`),
	bridgetest.Update(`{"sessionUpdate":"tool_call_update","toolCallId":"t6","title":"Searching for TODO","status":"completed"}`),
}

func TestCrewCoderToolNameFromBareTitle(t *testing.T) {
	got := toolNames(t, func(h *bridge.Host, script acptest.Script) *bridge.Bridge {
		b, _ := startCrewCoder(t, h, script, bridge.LaunchOptions{})
		return b
	}, titleNameSteps)
	want := []string{"t1:read_file", "t2:", "t3:crewcoder_clarify", "t4:apply_patch", "t5:TaskCreate", "t6:grep"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tool names %q, want %q", got, want)
	}
}

// The fallback is CrewCoder's: for other agents a title is a human text.
func TestPlainAgentTitleIsNotAName(t *testing.T) {
	got := toolNames(t, func(h *bridge.Host, script acptest.Script) *bridge.Bridge {
		b, err := h.Start(bridgetest.Context(t), bridgetest.AgentConfig(t, "plain", script))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}, titleNameSteps)
	want := []string{"t1:", "t2:", "t3:", "t4:apply_patch", "t5:", "t6:"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tool names %q, want %q", got, want)
	}
}
