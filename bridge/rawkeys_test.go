package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

func TestOnlyKeys(t *testing.T) {
	known := []string{"sessionUpdate", "toolCallId", "content", "_meta"}
	tests := []struct {
		raw  string
		want bool
	}{
		{`{"sessionUpdate":"tool_call","toolCallId":"c"}`, true},
		{` { "sessionUpdate" : "x" , "content" : [ {"extra":1,"type":"text"} ] } `, true},
		{`{"toolCallId":"a\"b,\"extra\":1","_meta":{"x":{"y":[1,{"z":"}"}]}}}`, true},
		{`{}`, true},
		{`{"sessionUpdate":"tool_call","extra":true}`, false},
		{`{"content":{"a":1},"extra":2}`, false},
		{`{"content":[1,2],"extra":2}`, false},
		{`{"tool\u0043allId":"c"}`, false}, // escaped keys are not compared
		{`{"sessionUpdate":"x"`, false},
		{`{"sessionUpdate":"x}`, false},
		{`["sessionUpdate"]`, false},
		{``, false},
		{`null`, false},
	}
	for _, tt := range tests {
		if got := onlyKeys([]byte(tt.raw), known); got != tt.want {
			t.Errorf("onlyKeys(%s) = %v, want %v", tt.raw, got, tt.want)
		}
	}
}

// toolHeavyUpdates is a tool-heavy turn as real agents send it: every tool
// call announced with its input and location, then finished with its
// output both as content and as rawOutput, and the agent's metadata
// repeating the tool's response (as claude-code-acp does), with plan and
// usage updates between.
func toolHeavyUpdates(n int) []string {
	var out []string
	output := strings.Repeat("line of tool output with some code in it: x := f(y)\n", 30)
	for i := range n {
		id := fmt.Sprintf("toolu_%03d", i)
		kind, title, input := "read", fmt.Sprintf("Read src/file%d.go", i), fmt.Sprintf(`{"file_path":"/w/src/file%d.go"}`, i)
		if i%3 == 1 {
			kind, title, input = "execute", "go test ./...", `{"command":"go test ./...","description":"Run the tests"}`
		}
		outJSON, _ := json.Marshal(output)
		content := `[{"type":"content","content":{"type":"text","text":` + string(outJSON) + `}}]`
		if i%3 == 2 {
			kind, title, input = "edit", fmt.Sprintf("Edit src/file%d.go", i), fmt.Sprintf(`{"file_path":"/w/src/file%d.go","old_string":"a","new_string":"b"}`, i)
			content = fmt.Sprintf(`[{"type":"diff","path":"/w/src/file%d.go","oldText":%s,"newText":%s}]`, i, outJSON, outJSON)
		}
		meta := `{"claudeCode":{"toolName":"` + strings.ToUpper(kind[:1]) + kind[1:] + `"}}`
		out = append(out,
			fmt.Sprintf(`{"sessionUpdate":"tool_call","toolCallId":%q,"title":%q,"kind":%q,"status":"pending","rawInput":%s,"locations":[{"path":"/w/src/file%d.go"}],"_meta":%s}`, id, title, kind, input, i, meta),
			fmt.Sprintf(`{"sessionUpdate":"tool_call_update","toolCallId":%q,"status":"in_progress"}`, id),
			fmt.Sprintf(`{"sessionUpdate":"tool_call_update","toolCallId":%q,"status":"completed","content":%s,"rawOutput":%s,"_meta":{"claudeCode":{"toolResponse":%s}}}`, id, content, outJSON, outJSON),
		)
		if i%5 == 4 {
			out = append(out,
				fmt.Sprintf(`{"sessionUpdate":"plan","entries":[{"content":"Read the code","priority":"high","status":"completed"},{"content":"Fix the bug","priority":"high","status":"in_progress"},{"content":"Run step %d","priority":"medium","status":"pending"}]}`, i),
				fmt.Sprintf(`{"sessionUpdate":"usage_update","used":%d,"size":200000,"cost":{"amount":0.%02d,"currency":"USD"}}`, 10000+1000*i, i))
		}
	}
	return out
}

// runToolHeavyTurn runs a tool-heavy turn through the bridge with the fake
// agent and returns the session's events. The turn ends with an update that
// has a vendor key, one with a _meta the event does not keep, and a vendor
// notification: the cases where Raw stays.
func runToolHeavyTurn(t *testing.T, n int) []Event {
	t.Helper()
	var steps []acptest.Step
	for _, u := range toolHeavyUpdates(n) {
		steps = append(steps, update(u), acptest.Step{Text: "ok "})
	}
	steps = append(steps,
		update(`{"sessionUpdate":"tool_call_update","toolCallId":"toolu_000","status":"completed","vendorDuration":12}`),
		update(`{"sessionUpdate":"usage_update","used":5,"size":200000,"_meta":{"vendor":{"tokens":5}}}`),
		acptest.Step{Notify: &acptest.Notification{Method: "_vendor/progress", Params: raw(`{"sessionId":"sess_1","step":3}`)}},
	)
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), agentConfig(t, "heavy", acptest.Script{Prompts: []acptest.Turn{{Steps: steps}}}))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("fix it")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("turn_end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	var events []Event
	for _, ev := range rec.snapshot() {
		if ev.Bridge == "heavy" {
			events = append(events, ev)
		}
	}
	return events
}

// TestRawOnlyWhereTypedFieldsFallShort: updates the bridge maps in full
// carry no Raw; an update with a key the event does not carry, and vendor
// notifications, keep it. It logs the stream's size and what Raw costs.
func TestRawOnlyWhereTypedFieldsFallShort(t *testing.T) {
	const n = 30
	events := runToolHeavyTurn(t, n)
	var total, rawBytes, dropped int
	kept := map[string]bool{}
	for _, ev := range events {
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		total += len(line) + 1
		rawBytes += len(ev.Raw)
		switch {
		case ev.Kind == KindExt && ev.Method == "_vendor/progress":
			kept["notification"] = len(ev.Raw) > 0
		case bytes.Contains(ev.Raw, []byte("vendorDuration")):
			kept["vendor key"] = true
		case bytes.Contains(ev.Raw, []byte(`"vendor":{"tokens"`)):
			kept["_meta"] = true
		case len(ev.Raw) > 0:
			t.Errorf("%s event carries Raw its typed fields hold: %.120s", ev.Kind, ev.Raw)
		}
	}
	for _, what := range []string{"notification", "vendor key", "_meta"} {
		if !kept[what] {
			t.Errorf("Raw of the update with a %s was dropped", what)
		}
	}
	// What the stream cost when every mapped update kept its Raw.
	for _, u := range toolHeavyUpdates(n) {
		var c bytes.Buffer
		if err := json.Compact(&c, []byte(u)); err != nil {
			t.Fatal(err)
		}
		dropped += c.Len() + len(`,"raw":`)
	}
	t.Logf("tool-heavy stream (%d tool calls, %d events): %d bytes; Raw %d bytes (%.1f%%); with Raw on every mapped update it was %d bytes, Raw %.1f%%",
		n, len(events), total, rawBytes, 100*float64(rawBytes)/float64(total), total+dropped, 100*float64(rawBytes+dropped)/float64(total+dropped))
}

// BenchmarkRawKeyCheck measures the Raw rule's cost per byte of update,
// beside what extracting the raw update already costs (a decode into
// json.RawMessage, as SessionNotification.RawUpdate does).
func BenchmarkRawKeyCheck(b *testing.B) {
	updates := toolHeavyUpdates(30)
	size := 0
	for _, u := range updates {
		size += len(u)
	}
	b.Run("onlyKeys", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, u := range updates {
				onlyKeys([]byte(u), toolCallKeys)
			}
		}
	})
	b.Run("extract", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, u := range updates {
				var p json.RawMessage
				_ = json.Unmarshal([]byte(u), &p)
			}
		}
	})
}
