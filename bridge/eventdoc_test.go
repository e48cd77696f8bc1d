package bridge

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// docExamples reads the "Event JSON" section of doc.go: its full example
// line, and one line per kind (the kind, then the keys after the common
// ones), expanded into the full lines they stand for.
func docExamples(t *testing.T) (full string, perKind map[Kind]string) {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(src), "// # Event JSON\n")
	if !ok {
		t.Fatal(`doc.go has no "# Event JSON" section`)
	}
	if end := strings.Index(section, "\n// # "); end >= 0 {
		section = section[:end]
	}
	kindLine := regexp.MustCompile(`^//\t([a-z_]+)(?: +(".*))?$`)
	perKind = map[Kind]string{}
	var rests []string
	var kinds []Kind
	for line := range strings.SplitSeq(section, "\n") {
		if strings.HasPrefix(line, "//\t{") {
			full = strings.TrimPrefix(line, "//\t")
		}
		if m := kindLine.FindStringSubmatch(line); m != nil {
			if slices.Contains(kinds, Kind(m[1])) {
				t.Errorf("doc.go shows kind %s twice", m[1])
			}
			kinds, rests = append(kinds, Kind(m[1])), append(rests, m[2])
		}
	}
	// The common keys: everything before kind, and the time after it.
	kindAt := strings.Index(full, `"kind":"`)
	timeAt := strings.Index(full, `"time":"`)
	if full == "" || kindAt < 0 || timeAt < kindAt {
		t.Fatalf("doc.go's Event JSON section has no full example line with kind and time: %q", full)
	}
	timeEnd := timeAt + strings.Index(full[timeAt:], `",`) + 2
	for i, k := range kinds {
		common := full[timeAt:timeEnd]
		if rests[i] == "" { // a kind with no keys of its own
			common = strings.TrimSuffix(common, ",")
		}
		perKind[k] = full[:kindAt] + `"kind":"` + string(k) + `",` + common + rests[i] + "}"
	}
	return full, perKind
}

// TestDocShowsEveryKind: the package doc has an example line for every
// Kind constant and for no other kind, and each line is exactly what
// json.Marshal writes for the event it decodes to.
func TestDocShowsEveryKind(t *testing.T) {
	full, perKind := docExamples(t)
	constants := kindConstants(t)
	for _, k := range constants {
		if _, ok := perKind[k]; !ok {
			t.Errorf("doc.go's Event JSON section has no example of kind %s", k)
		}
	}
	lines := []string{full}
	for k, line := range perKind {
		if !slices.Contains(constants, k) {
			t.Errorf("doc.go shows kind %s, which is no Kind constant", k)
		}
		lines = append(lines, line)
	}
	for _, line := range lines {
		var ev Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Errorf("doc example %s: %v", line, err)
			continue
		}
		if again, _ := json.Marshal(ev); string(again) != line {
			t.Errorf("doc example is not the JSON form of the event it stands for:\n doc  %s\n form %s", line, again)
		}
	}
}

// eventSchema compiles testdata/event.schema.json.
func eventSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/event.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("event.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("event.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validateLine(t *testing.T, s *jsonschema.Schema, what string, line []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := s.Validate(inst); err != nil {
		t.Errorf("%s %s does not match event.schema.json: %v", what, line, err)
	}
}

// TestEventSchemaKindsAreTheKinds: the schema's kind enum lists exactly
// the Kind constants.
func TestEventSchemaKindsAreTheKinds(t *testing.T) {
	data, err := os.ReadFile("testdata/event.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs struct {
			Kind struct {
				Enum []Kind `json:"enum"`
			} `json:"kind"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	got, want := slices.Sorted(slices.Values(doc.Defs.Kind.Enum)), slices.Sorted(slices.Values(kindConstants(t)))
	if !slices.Equal(got, want) {
		t.Errorf("schema kinds %q, Kind constants %q", got, want)
	}
}

// TestEventSchemaValidatesExamplesAndARealRun: every doc example, every
// filled example and every event of a real fake-agent run (tools, a
// permission, a failed turn with the agent's error code) match the schema,
// and the run's events come back from JSON as they were.
func TestEventSchemaValidatesExamplesAndARealRun(t *testing.T) {
	s := eventSchema(t)
	full, perKind := docExamples(t)
	validateLine(t, s, "doc example", []byte(full))
	for _, line := range perKind {
		validateLine(t, s, "doc example", []byte(line))
	}
	for kind, ev := range filledEvents() {
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		validateLine(t, s, "filled "+string(kind)+" example", line)
	}
	events := runSchemaTurns(t)
	seen := map[Kind]bool{}
	for _, ev := range events {
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		validateLine(t, s, "event", line)
		var back Event
		if err := json.Unmarshal(line, &back); err != nil {
			t.Fatal(err)
		}
		if again, _ := json.Marshal(back); !bytes.Equal(again, line) {
			t.Errorf("event does not round-trip:\n  %s\n  %s", line, again)
		}
		seen[ev.Kind] = true
		if ev.Kind == KindTurnEnd && ev.Err != nil && !bytes.Contains(line, []byte(`"code":-32603`)) {
			t.Errorf("the failed turn's event lacks the agent's error code: %s", line)
		}
	}
	for _, k := range []Kind{KindSession, KindTurnStart, KindToolStart, KindToolUpdate, KindToolEnd, KindPermission, KindPlan, KindUsage, KindText, KindExt, KindTurnEnd} {
		if !seen[k] {
			t.Errorf("the run had no %s event to validate", k)
		}
	}
}

// runSchemaTurns runs two turns with the fake agent: a tool-heavy one with
// a permission request the app allows, and one the agent fails with
// -32603. It returns the bridge's events.
func runSchemaTurns(t *testing.T) []Event {
	t.Helper()
	var steps []acptest.Step
	for i, u := range toolHeavyUpdates(6) {
		steps = append(steps, update(u))
		if i == 0 {
			steps = append(steps, acptest.Step{Permission: &acptest.Permission{ToolCall: raw(`{"toolCallId":"toolu_000"}`)}})
		}
	}
	steps = append(steps, acptest.Step{Notify: &acptest.Notification{Method: "_vendor/progress", Params: raw(`{"sessionId":"sess_1","step":3}`)}})
	script := acptest.Script{Prompts: []acptest.Turn{
		{Match: "fail", Error: &acptest.Error{Code: -32603, Message: "model overloaded"}},
		{Steps: steps},
	}}
	h, rec := newHostAndRecorder(t, nil)
	rec.setPermissionAnswer(func(p *PermissionRequest) { p.Allow() })
	b, err := h.Start(ctxT(t), agentConfig(t, "schema", script))
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
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("fail now")); err == nil {
		t.Fatal("the failing turn succeeded")
	}
	rec.waitFor("the failed turn's end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Err != nil })
	return rec.of("schema", s.ID())
}
