package bridge

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// TestPlanOperations: the bridge declares the draft plan capability and
// folds plan_update and plan_removed into plan events that carry every
// plan (Plans) and their entries (Plan), which the SessionView keeps;
// operations that do not apply are passed on as ext and change nothing.
func TestPlanOperations(t *testing.T) {
	valid := []string{
		`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"Read","priority":"high","status":"completed"}]}}`,
		`{"sessionUpdate":"plan_update","plan":{"type":"markdown","planId":"p2","content":"# Later"}}`,
		`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"Read","priority":"high","status":"completed"},{"content":"Fix","priority":"medium","status":"in_progress"}]}}`,
		`{"sessionUpdate":"plan_removed","planId":"nope"}`,
		`{"sessionUpdate":"plan_update","plan":{"type":"file","planId":"p3","uri":"file:///w/PLAN.md"}}`,
		`{"sessionUpdate":"plan_removed","planId":"p2"}`,
	}
	invalid := []string{
		`{"sessionUpdate":"plan_update","plan":{"type":"diagram","planId":"p4","svg":"<svg/>"}}`,
	}
	checkUpdatesOnWire(t, true, valid...)
	checkUpdatesOnWire(t, false, invalid...)
	var steps []acptest.Step
	for _, u := range append(valid[:4:4], append(invalid, valid[4:]...)...) {
		steps = append(steps, update(u))
	}
	steps = append(steps, acptest.Step{Text: "still here"})
	s, rec, tr := openProto(t, "pl", acptest.Script{Prompts: []acptest.Turn{{Steps: steps}}})
	var init struct {
		ClientCapabilities struct {
			Plan json.RawMessage `json:"plan"`
		} `json:"clientCapabilities"`
	}
	if err := json.Unmarshal(receivedParams(t, tr, "initialize"), &init); err != nil {
		t.Fatal(err)
	}
	if string(init.ClientCapabilities.Plan) != "{}" {
		t.Errorf("initialize declares plan %s, want {}", init.ClientCapabilities.Plan)
	}
	runTurn(t, s, rec)
	var got []string
	var view SessionView
	for _, ev := range rec.of("pl", s.ID()) {
		view.Apply(ev)
		switch ev.Kind {
		case KindPlan:
			got = append(got, "plan "+describePlans(ev.Plans)+" entries "+describeEntries(ev.Plan))
		case KindExt:
			got = append(got, "ext "+string(ev.Raw))
		}
	}
	want := []string{
		"plan p1:items entries Read",
		"plan p1:items,p2:markdown entries Read",
		"plan p1:items,p2:markdown entries Read,Fix",
		"ext " + valid[3],
		"ext " + invalid[0],
		"plan p1:items,p2:markdown,p3:file entries Read,Fix",
		"plan p1:items,p3:file entries Read,Fix",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if describePlans(view.Plans) != "p1:items,p3:file" || describeEntries(view.Plan) != "Read,Fix" || view.Plans[1].URI != "file:///w/PLAN.md" {
		t.Errorf("view plans %+v, plan %+v", view.Plans, view.Plan)
	}
	rec.waitFor("the turn's text after the bad operations", func(ev Event) bool { return ev.Kind == KindText && ev.Text == "still here" })
}

func describePlans(plans []acpclient.PlanContent) string {
	var out []string
	for _, p := range plans {
		out = append(out, p.PlanID+":"+p.Type)
	}
	return strings.Join(out, ",")
}

func describeEntries(entries []acpclient.PlanEntry) string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Content)
	}
	return strings.Join(out, ",")
}

// TestPlansAreBounded: a plan past plansKept, or markdown over the limit,
// is passed on as ext and not kept.
func TestPlansAreBounded(t *testing.T) {
	var f updateFolds
	for i := range plansKept {
		if _, ok := f.applyPlan(&acpclient.PlanContentUpdate{Plan: acpclient.PlanContent{Type: "items", PlanID: strings.Repeat("p", i+1)}}); !ok {
			t.Fatalf("plan %d refused", i)
		}
	}
	if _, ok := f.applyPlan(&acpclient.PlanContentUpdate{Plan: acpclient.PlanContent{Type: "items", PlanID: "one too many"}}); ok {
		t.Error("a plan past the limit was kept")
	}
	if _, ok := f.applyPlan(&acpclient.PlanContentUpdate{Plan: acpclient.PlanContent{Type: "markdown", PlanID: "p", Content: strings.Repeat("#", foldedTextLimit+1)}}); ok {
		t.Error("markdown over the limit was kept")
	}
	if plans, ok := f.applyPlan(&acpclient.PlanContentUpdate{Plan: acpclient.PlanContent{Type: "markdown", PlanID: "p", Content: "# ok"}}); !ok || len(plans) != plansKept || plans[0].Content != "# ok" {
		t.Errorf("replacing a kept plan: ok %v, %d plans", ok, len(plans))
	}
}
