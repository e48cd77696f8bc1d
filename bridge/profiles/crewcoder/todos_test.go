package crewcoder

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/bridgetest"
)

// taskCall is a finished CrewCoder task tool call.
func taskCall(name, status, input, output string) *bridge.ToolCall {
	return &bridge.ToolCall{ID: "t", Name: name, Status: status, RawInput: bridgetest.Raw(input), RawOutput: bridgetest.Raw(output)}
}

// todoSummary renders a list compactly: "id#number subject status".
func todoSummary(events []bridge.Event) [][]string {
	var out [][]string
	for _, ev := range events {
		if ev.Kind != bridge.KindTodos {
			continue
		}
		list := []string{}
		for _, t := range ev.Todos {
			list = append(list, t.ID+"#"+itoa(t.Number)+" "+t.Content+" "+t.Status)
		}
		out = append(out, list)
	}
	return out
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestTodosFromTaskTools(t *testing.T) {
	tests := []struct {
		name  string
		calls []*bridge.ToolCall
		want  [][]string
	}{
		{
			name: "snapshot with full records",
			calls: []*bridge.ToolCall{
				taskCall("TaskCreate", "completed", `{"subject":"Parse input"}`,
					`{"task":{"id":"tk-1","displayNumber":1,"subject":"Parse input","status":"pending","owner":"cc_1","blockedBy":["tk-0"],"createdAt":"2026-11-30T10:00:00Z"},"todos":[{"id":"tk-1","content":"Parse input","status":"pending","activeForm":"Parsing input"}]}`),
				taskCall("TaskUpdate", "completed", `{"taskId":"tk-1","status":"in_progress"}`,
					`{"task":{"id":"tk-1","displayNumber":1,"subject":"Parse input","status":"in_progress","owner":"cc_1","updatedAt":"2026-11-30T10:01:00Z"},"todos":[{"id":"tk-1","content":"Parse input","status":"in_progress","activeForm":"Parsing input"}]}`),
			},
			want: [][]string{{"tk-1#1 Parse input pending"}, {"tk-1#1 Parse input in_progress"}},
		},
		{
			name: "incremental only: create, update, delete",
			calls: []*bridge.ToolCall{
				taskCall("TaskCreate", "completed", `{"subject":"A","activeForm":"Doing A"}`, `{"id":"1"}`),
				taskCall("TaskCreate", "completed", `{"subject":"B"}`, `{"id":2}`),
				taskCall("TaskUpdate", "completed", `{"taskId":"1","status":"completed"}`, `{"success":true}`),
				taskCall("TaskDelete", "completed", `{"taskId":"2"}`, `{"success":true}`),
			},
			want: [][]string{{"1#0 A pending"}, {"1#0 A pending", "2#0 B pending"}, {"1#0 A completed", "2#0 B pending"}, {"1#0 A completed"}},
		},
		{
			name: "failed calls are not evidence",
			calls: []*bridge.ToolCall{
				taskCall("TaskCreate", "failed", `{"subject":"A"}`, `{"id":"1"}`),
			},
		},
		{
			name: "a project-wide TaskList does not count",
			calls: []*bridge.ToolCall{
				taskCall("TaskList", "completed", `{}`, `{"tasks":[{"id":"9","subject":"Someone else's","status":"pending"}]}`),
			},
		},
		{
			name: "a session-only TaskList replaces the list",
			calls: []*bridge.ToolCall{
				taskCall("TaskCreate", "completed", `{"subject":"Old"}`, `{"id":"1"}`),
				taskCall("TaskList", "completed", `{"sessionOnly":true}`, `{"tasks":[{"id":"5","displayNumber":2,"subject":"Mine","status":"in_progress"}]}`),
			},
			want: [][]string{{"1#0 Old pending"}, {"5#2 Mine in_progress"}},
		},
		{
			name:  "other tools are ignored",
			calls: []*bridge.ToolCall{taskCall("Bash", "completed", `{"command":"ls"}`, `{"todos":[{"content":"x","status":"pending"}]}`)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			book := newTodoBook()
			var events []bridge.Event
			for _, c := range tt.calls {
				events = append(events, book.toolEnded("s", c)...)
			}
			if got := todoSummary(events); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("lists\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestTodosKeepTheFullRecord(t *testing.T) {
	book := newTodoBook()
	events := book.toolEnded("s", taskCall("TaskCreate", "completed", `{"subject":"Parse input"}`,
		`{"task":{"id":"tk-1","displayNumber":3,"subject":"Parse input","description":"all of it","status":"pending","owner":"cc_1","projectId":"p9","metadata":{"k":"v"},"blocks":["tk-2"],"blockedBy":["tk-0"],"createdAt":"c","updatedAt":"u"},"todos":[{"id":"tk-1","content":"Parse input","status":"pending","activeForm":"Parsing input"}]}`))
	if len(events) != 1 || len(events[0].Todos) != 1 {
		t.Fatalf("events %+v", events)
	}
	got := events[0].Todos[0]
	want := bridge.Todo{ID: "tk-1", Number: 3, Content: "Parse input", Description: "all of it", Status: "pending", ActiveForm: "Parsing input",
		Owner: "cc_1", Blocks: []string{"tk-2"}, BlockedBy: []string{"tk-0"}, CreatedAt: "c", UpdatedAt: "u"}
	task := got.Task
	got.Task = nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("todo\n got %+v\nwant %+v", got, want)
	}
	var rec map[string]any
	if err := json.Unmarshal(task, &rec); err != nil || rec["projectId"] != "p9" || rec["metadata"].(map[string]any)["k"] != "v" {
		t.Fatalf("full record lost: %s", task)
	}
	if p := events[0].Plan; len(p) != 1 || p[0].Content != "Parse input" || p[0].Status != "pending" {
		t.Fatalf("plan %+v", p)
	}
}

func TestCrewCoderTodosThroughTheBridge(t *testing.T) {
	h, rec := bridgetest.NewHost(t, nil)
	script := crewCoderScript()
	script.Prompts = []acptest.Turn{
		{Match: "plan", Steps: []acptest.Step{
			bridgetest.Update(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"TaskCreate","kind":"other","status":"in_progress","rawInput":{"subject":"Write tests"},"_meta":{"crewcoder/tool":{"name":"TaskCreate"}}}`),
			bridgetest.Update(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","rawOutput":{"task":{"id":"tk-1","displayNumber":1,"subject":"Write tests","status":"pending"},"todos":[{"id":"tk-1","content":"Write tests","status":"pending","activeForm":"Writing tests"}]}}`),
		}},
		{Match: "next", Steps: []acptest.Step{{Text: "ok"}}},
	}
	b, _ := startCrewCoder(t, h, script, bridge.LaunchOptions{})
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"plan", "next"} {
		if _, err := s.Prompt(bridgetest.Context(t), acpclient.TextBlock(p)); err != nil {
			t.Fatal(err)
		}
	}
	rec.WaitFor("second turn end", func(ev bridge.Event) bool { return ev.Kind == bridge.KindTurnEnd && ev.Seq > 6 })
	var got []string
	for _, ev := range rec.Of("cc", s.ID()) {
		switch ev.Kind {
		case bridge.KindTodos:
			got = append(got, "todos:"+itoa(len(ev.Todos)))
		case bridge.KindTurnStart, bridge.KindToolEnd:
			got = append(got, bridgetest.Describe(ev))
		}
	}
	// The list follows the tool that produced it; a new user message
	// clears it at once.
	want := []string{"turn_start:plan", "tool_end:t1:completed", "todos:1", "turn_start:next", "todos:0"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}
