package bridge

import (
	"reflect"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/internal/acptest"
)

func TestIdentifierTitle(t *testing.T) {
	for _, tt := range []struct {
		title, want string
	}{
		{"read_file", "read_file"},
		{"TaskCreate", "TaskCreate"},
		{"_private", "_private"},
		{"mcp__github__list-issues", "mcp__github__list-issues"},
		{"bash2", "bash2"},
		{strings.Repeat("a", 64), strings.Repeat("a", 64)},
		{strings.Repeat("a", 65), ""},
		{"", ""},
		{"Read main.go", ""},
		{"main.go", ""},
		{"read file", ""},
		{" read_file", ""},
		{"2fa", ""},
		{"-flag", ""},
		{"lire_fichié", ""},
		{"a/b", ""},
	} {
		if got := IdentifierTitle(tt.title); got != tt.want {
			t.Errorf("IdentifierTitle(%q) = %q, want %q", tt.title, got, tt.want)
		}
	}
}

// toolNames runs one turn of tool calls and returns "id:name" at each
// tool_end.
func toolNames(t *testing.T, start func(*Host, acptest.Script) *Bridge, steps []acptest.Step) []string {
	t.Helper()
	h, rec := newHostAndRecorder(t, nil)
	script := crewCoderScript()
	script.Prompts = []acptest.Turn{{Steps: steps}}
	b := start(h, script)
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	var out []string
	for _, ev := range rec.of(b.ID(), s.ID()) {
		if ev.Kind == KindToolEnd {
			out = append(out, ev.Tool.ID+":"+ev.Tool.Name)
		}
	}
	return out
}

var titleNameSteps = []acptest.Step{
	// An older stream: the title is the name, nothing else says it.
	update(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"read_file","kind":"read","status":"pending"}`),
	update(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`),
	// A human title gives no name.
	update(`{"sessionUpdate":"tool_call","toolCallId":"t2","title":"Read main.go","kind":"read","status":"pending"}`),
	update(`{"sessionUpdate":"tool_call_update","toolCallId":"t2","status":"completed"}`),
	// _meta wins over the title.
	update(`{"sessionUpdate":"tool_call","toolCallId":"t3","title":"think","kind":"think","status":"pending","_meta":{"crewcoder/tool":{"name":"crewcoder_clarify"}}}`),
	update(`{"sessionUpdate":"tool_call_update","toolCallId":"t3","status":"completed"}`),
	// ACP's name wins over the title, also when it comes later.
	update(`{"sessionUpdate":"tool_call","toolCallId":"t4","title":"edit","kind":"edit","status":"pending"}`),
	update(`{"sessionUpdate":"tool_call_update","toolCallId":"t4","name":"apply_patch","status":"in_progress"}`),
	update(`{"sessionUpdate":"tool_call_update","toolCallId":"t4","status":"completed"}`),
	// _meta arriving after a title-derived name replaces it.
	update(`{"sessionUpdate":"tool_call","toolCallId":"t5","title":"bash","kind":"execute","status":"pending"}`),
	update(`{"sessionUpdate":"tool_call_update","toolCallId":"t5","status":"completed","_meta":{"crewcoder/tool":{"name":"TaskCreate"}}}`),
	// A human title after the bare one keeps the name read before.
	update(`{"sessionUpdate":"tool_call","toolCallId":"t6","title":"grep","kind":"search","status":"pending"}`),
	update(`{"sessionUpdate":"tool_call_update","toolCallId":"t6","title":"Searching for TODO","status":"completed"}`),
}

func TestCrewCoderToolNameFromBareTitle(t *testing.T) {
	got := toolNames(t, func(h *Host, script acptest.Script) *Bridge {
		b, _ := startCrewCoder(t, h, script, LaunchOptions{})
		return b
	}, titleNameSteps)
	want := []string{"t1:read_file", "t2:", "t3:crewcoder_clarify", "t4:apply_patch", "t5:TaskCreate", "t6:grep"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tool names %q, want %q", got, want)
	}
}

// The fallback is CrewCoder's: for other agents a title is a human text.
func TestPlainAgentTitleIsNotAName(t *testing.T) {
	got := toolNames(t, func(h *Host, script acptest.Script) *Bridge {
		b, err := h.Start(ctxT(t), agentConfig(t, "plain", script))
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
