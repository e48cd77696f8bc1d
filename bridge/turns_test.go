package bridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/fakeclock"
	"github.com/acphost/acphost/internal/waitfor"
)

// recordedAgent is agentConfig with the fake agent recording what it
// receives; read it with acptest.ReadRecord(record).
func recordedAgent(t *testing.T, id string, script acptest.Script) (cfg Config, record, scriptPath string) {
	t.Helper()
	bin := acptest.BuildBinary(t)
	scriptPath = acptest.WriteScript(t, script)
	record = filepath.Join(t.TempDir(), "record")
	return Config{ID: id, Transport: &acpclient.CommandTransport{Path: bin, Args: []string{"-script", scriptPath, "-record", record},
		StopTimeout: 200 * time.Millisecond, KillTimeout: 200 * time.Millisecond}}, record, scriptPath
}

// running reports whether a process whose command line contains s runs.
func running(s string) bool {
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, []byte(s)) {
			return true
		}
	}
	return false
}

// turnOf lists describe() of a session's events of one turn number.
func turnOf(events []Event, turn uint64) []string {
	var out []string
	for _, ev := range events {
		if ev.Turn == turn {
			out = append(out, describe(ev))
		}
	}
	return out
}

// TestToolRowsBelongToTheirTurn: agents reuse call ids every turn. Turn 1
// leaves call_2 pending (the agent never finishes it): the turn's end closes
// it unfinished, a late update lands on that closed row, and turn 2's call_2
// opens a row of its own.
func TestToolRowsBelongToTheirTurn(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{{
		Steps: []acptest.Step{
			update(`{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"read","status":"pending"}`),
			update(`{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"completed"}`),
			update(`{"sessionUpdate":"tool_call","toolCallId":"call_2","title":"write","status":"pending"}`),
		},
		After: []acptest.Step{update(`{"sessionUpdate":"tool_call_update","toolCallId":"call_2","status":"in_progress"}`)},
	}}}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), agentConfig(t, "rows", script))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("one")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("late update", func(ev Event) bool { return ev.Late && ev.Kind == KindToolUpdate })
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("two")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("second turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Turn == 2 })
	evs := rec.of("rows", s.ID())
	for n, want := range map[uint64][]string{
		1: {"turn_start:one", "tool_start:call_1:pending", "tool_end:call_1:completed", "tool_start:call_2:pending",
			"tool_end:call_2:unfinished", "turn_end:end_turn", "tool_update:call_2:in_progress(late)"},
		2: {"turn_start:two", "tool_start:call_1:pending", "tool_end:call_1:completed", "tool_start:call_2:pending",
			"tool_end:call_2:unfinished", "turn_end:end_turn", "tool_update:call_2:in_progress(late)"},
	} {
		got := turnOf(evs, n)
		if n == 2 {
			got = slices.DeleteFunc(got, func(s string) bool { return s == "tool_update:call_2:in_progress(late)" })
			want = want[:len(want)-1]
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("turn %d:\n got %q\nwant %q", n, got, want)
		}
	}
}

// TestRejectedAndAutoCancelledRowsCloseAtTurnEnd: a reject (Build) and an
// automatic cancel (Ask) both end the turn end_turn with the tool never
// finished; the row is closed unfinished before turn_end.
func TestRejectedAndAutoCancelledRowsCloseAtTurnEnd(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		update(`{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"rm","status":"pending"}`),
		{Permission: &acptest.Permission{ToolCall: raw(`{"toolCallId":"call_1"}`)}},
		{Text: "ok, not doing it"},
	}}}}
	for _, tt := range []struct {
		name   string
		policy Policy
	}{{"reject", Policy{Mode: ModeBuild}}, {"ask", Policy{Mode: ModeAsk}}} {
		t.Run(tt.name, func(t *testing.T) {
			h, rec := newHostAndRecorder(t, nil)
			rec.setPermissionAnswer(func(p *PermissionRequest) { p.Reject() })
			b, err := h.Start(ctxT(t), agentConfig(t, "rej", script))
			if err != nil {
				t.Fatal(err)
			}
			s, _ := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Policy: tt.policy})
			if stop, err := s.Prompt(ctxT(t), acpclient.TextBlock("x")); err != nil || stop != acpclient.StopEndTurn {
				t.Fatalf("Prompt = %q, %v", stop, err)
			}
			rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
			got := kinds(rec.of("rej", s.ID()), KindCommands, KindSession, KindAuthority, KindText, KindPermission, KindDecision)
			want := []string{"turn_start:x", "tool_start:call_1:pending", "tool_end:call_1:unfinished", "turn_end:end_turn"}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("events %q, want %q", got, want)
			}
		})
	}
}

// TestEventsCarryTheirTurn: turn_start, output and turn_end carry the
// turn's number, late updates the number of the turn that ended, events
// outside turns 0.
func TestEventsCarryTheirTurn(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{{
		Steps: []acptest.Step{{Text: "hello"}},
		After: []acptest.Step{update(`{"sessionUpdate":"usage_update","used":10,"size":100}`)},
	}}}
	h, rec := newHostAndRecorder(t, nil)
	b, _ := h.Start(ctxT(t), agentConfig(t, "num", script))
	s, _ := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	for i := uint64(1); i <= 2; i++ {
		if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("x")); err != nil {
			t.Fatal(err)
		}
		rec.waitFor("late usage", func(ev Event) bool { return ev.Kind == KindUsage && ev.Turn == i })
	}
	for _, ev := range rec.of("num", s.ID()) {
		var want uint64
		switch {
		case ev.Kind == KindSession || ev.Kind == KindCommands || ev.Kind == KindAuthority:
			want = 0
		case ev.Kind == KindUsage && !ev.Late:
			t.Errorf("usage not late: %+v", ev)
		default:
			want = ev.Turn
			if want != 1 && want != 2 {
				t.Errorf("%s carries turn %d", describe(ev), ev.Turn)
			}
		}
		if ev.Turn != want {
			t.Errorf("%s carries turn %d, want %d", describe(ev), ev.Turn, want)
		}
	}
	if got := turnOf(rec.of("num", s.ID()), 2); !reflect.DeepEqual(got, []string{"turn_start:x", "text:hello", "turn_end:end_turn", "usage:true:10/100(late)"}) {
		t.Errorf("turn 2: %q", got)
	}
}

// TestPromptFromTheTurnEndHandler: an app that prompts from its Events()
// consumer when it sees turn_end never gets ErrBusy.
func TestPromptFromTheTurnEndHandler(t *testing.T) {
	const turns = 40
	h := NewHost(nil)
	b, err := h.Start(ctxT(t), agentConfig(t, "chain", acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{{Text: "hi"}}}}}))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, turns)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range h.Events() {
			if ev.Kind != KindTurnEnd || ev.Turn >= turns {
				continue
			}
			_, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("again")) // from the consumer itself
			errs <- err
		}
	}()
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("first")); err != nil {
		t.Fatal(err)
	}
	for range turns - 1 {
		select {
		case err := <-errs:
			if err != nil {
				t.Fatalf("Prompt from the turn_end handler: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the chain of turns stopped")
		}
	}
	if s.Busy() {
		t.Error("Busy after the last turn")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Shutdown(ctx); err != nil {
		t.Error(err)
	}
	waitfor.Closed(t, done, "the call to return")
}

// TestControlCallsDuringATurn: mode and config changes work while a turn
// runs and while other control calls are in flight; a second prompt gets
// ErrBusy, a compaction ErrTurnRunning; Busy tells.
func TestControlCallsDuringATurn(t *testing.T) {
	script := acptest.Script{
		NewSession: acptest.NewSessionScript{
			Modes:         raw(`{"currentModeId":"ask","availableModes":[{"id":"ask","name":"Ask"},{"id":"code","name":"Code"}]}`),
			ConfigOptions: raw(`[{"id":"speed","name":"Speed","type":"select","currentValue":"slow","options":[{"value":"slow","name":"Slow"},{"value":"fast","name":"Fast"}]}]`),
		},
		Prompts: []acptest.Turn{{Steps: []acptest.Step{{Text: "working"}, {WaitCancel: true}}}},
	}
	h, rec := newHostAndRecorder(t, nil)
	cfg := agentConfig(t, "ctl", script)
	cfg.Provider = &Provider{Compact: func(context.Context, *acpclient.Conn, string) (string, error) { return "summary", nil }}
	b, _ := h.Start(ctxT(t), cfg)
	s, _ := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if s.Busy() {
		t.Fatal("Busy before any prompt")
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	stopc := make(chan string, 1)
	go func() { stop, _ := s.Prompt(ctx, acpclient.TextBlock("go")); stopc <- stop }()
	rec.waitFor("output", func(ev Event) bool { return ev.Text == "working" })
	if !s.Busy() {
		t.Error("not Busy during a turn")
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("again")); !errors.Is(err, ErrBusy) {
		t.Errorf("second Prompt: %v, want ErrBusy", err)
	}
	if _, err := s.Compact(ctxT(t)); !errors.Is(err, ErrTurnRunning) || errors.Is(err, ErrBusy) {
		t.Errorf("Compact during a turn: %v, want ErrTurnRunning", err)
	}
	errc := make(chan error, 8)
	for i := range 4 {
		go func() { errc <- s.SetAgentMode(ctxT(t), []string{"ask", "code"}[i%2]) }()
		go func() {
			_, err := s.SetConfigOption(ctxT(t), acpclient.SetConfigOptionRequest{ConfigID: "speed", Value: "fast"})
			errc <- err
		}()
	}
	for range 8 {
		if err := waitfor.Recv(t, errc, "the call to return its error"); err != nil {
			t.Errorf("control call during a turn: %v", err)
		}
	}
	cancel()
	if stop := waitfor.Recv(t, stopc, "the stop reason"); stop != acpclient.StopCancelled {
		t.Errorf("stop reason %q", stop)
	}
	if s.Busy() {
		t.Error("Busy after the turn")
	}
	if sum, err := s.Compact(ctxT(t)); err != nil || sum != "summary" {
		t.Errorf("Compact between turns = %q, %v", sum, err)
	}
}

// TestSetAgentModeIsVisible: the fake agent confirms set_mode with an empty
// answer only, like gemini; the session still records and reports it.
func TestSetAgentModeIsVisible(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	b, _ := h.Start(ctxT(t), agentConfig(t, "mode", acptest.Script{NewSession: acptest.NewSessionScript{
		Modes: raw(`{"currentModeId":"ask","availableModes":[{"id":"ask","name":"Ask"},{"id":"code","name":"Code"}]}`)}}))
	s, _ := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err := s.SetAgentMode(ctxT(t), "code"); err != nil {
		t.Fatal(err)
	}
	ev := rec.waitFor("agent_mode", func(ev Event) bool { return ev.Kind == KindAgentMode })
	if ev.AgentMode != "code" || s.AgentMode() != "code" || ev.Key != s.Key() {
		t.Errorf("agent_mode %q (key %q), AgentMode %q", ev.AgentMode, ev.Key, s.AgentMode())
	}
}

// TestLegacySetModelUpdatesTheModelState: session/set_model answers {}; the
// session's model state and a model event follow the selection.
func TestLegacySetModelUpdatesTheModelState(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	b, _ := h.Start(ctxT(t), agentConfig(t, "model", acptest.Script{NewSession: acptest.NewSessionScript{
		Models: raw(`{"currentModelId":"small","availableModels":[{"modelId":"small","name":"Small"},{"modelId":"big","name":"Big"}]}`)}}))
	s, _ := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err := s.SetModel(ctxT(t), "big"); err != nil {
		t.Fatal(err)
	}
	if m := s.Models(); m == nil || m.CurrentModelID != "big" || len(m.AvailableModels) != 2 {
		t.Errorf("Models() = %+v", m)
	}
	ev := rec.waitFor("model event", func(ev Event) bool { return ev.Kind == KindModel })
	if ev.Models.CurrentModelID != "big" || len(ev.Models.AvailableModels) != 2 {
		t.Errorf("model event %+v", ev.Models)
	}
}

// TestCancelSendsSessionCancelFirst: the agent learns of the cancel before
// its pending permission request is answered "cancelled", so it ends the
// turn "cancelled" instead of carrying on after a refusal.
func TestCancelSendsSessionCancelFirst(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Permission: &acptest.Permission{}}, {Text: "carried on"},
	}}}}
	h, rec := newHostAndRecorder(t, nil)
	cfg, record, _ := recordedAgent(t, "order", script)
	b, _ := h.Start(ctxT(t), cfg)
	s, _ := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Policy: Policy{Mode: ModeBuild}})
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	stopc := make(chan string, 1)
	go func() { stop, _ := s.Prompt(ctx, acpclient.TextBlock("x")); stopc <- stop }()
	rec.waitFor("permission", func(ev Event) bool { return ev.Kind == KindPermission })
	cancel()
	if stop := waitfor.Recv(t, stopc, "the stop reason"); stop != acpclient.StopCancelled {
		t.Errorf("stop reason %q, want cancelled", stop)
	}
	msgs, err := acptest.ReadRecord(record)
	if err != nil {
		t.Fatal(err)
	}
	cancelAt, answerAt := -1, -1
	for i, m := range msgs {
		if m.Method == "session/cancel" && cancelAt < 0 {
			cancelAt = i
		}
		if m.Method == "" && len(m.Result) > 0 && bytes.Contains(m.Result, []byte(`"cancelled"`)) && answerAt < 0 {
			answerAt = i
		}
	}
	if cancelAt < 0 || answerAt < 0 || cancelAt > answerAt {
		t.Fatalf("session/cancel at %d, the cancelled answer at %d: want the cancel first", cancelAt, answerAt)
	}
	d := rec.waitFor("decision", func(ev Event) bool { return ev.Kind == KindDecision })
	if d.Decision.By != "host" || d.Decision.Rule != "turn cancelled" || d.Decision.Outcome != "cancelled" {
		t.Errorf("decision %+v", d.Decision)
	}
}

// TestUnacknowledgedCancelEndsTheTurnAfterTheGrace: an agent that never
// answers session/cancel: the turn ends "cancelled" with ErrCancelIgnored
// after CancelGrace (on the injected clock, long before the watchdog), and
// the process is killed.
func TestUnacknowledgedCancelEndsTheTurnAfterTheGrace(t *testing.T) {
	clock := fakeClock{fakeclock.New()}
	script := acptest.Script{Prompts: []acptest.Turn{
		{Match: "x", Steps: []acptest.Step{{Text: "stuck"}, {Hang: true}}},
		{Steps: []acptest.Step{{Text: "fresh"}}},
	}}
	h, rec := newHostAndRecorder(t, nil)
	cfg, _, scriptPath := recordedAgent(t, "deaf", script)
	cfg.Clock = clock
	cfg.CancelGrace = 3 * time.Second
	b, _ := h.Start(ctxT(t), cfg)
	s, _ := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	type result struct {
		stop string
		err  error
	}
	done := make(chan result, 1)
	go func() { stop, err := s.Prompt(ctx, acpclient.TextBlock("x")); done <- result{stop, err} }()
	rec.waitFor("output", func(ev Event) bool { return ev.Text == "stuck" })
	if !clock.WaitForTimers(1, 5*time.Second) { // the watchdog
		t.Fatal("watchdog not armed")
	}
	armed := clock.Pending()
	cancel()
	if !clock.WaitForTimers(armed+1, 5*time.Second) {
		t.Fatal("cancel grace not armed")
	}
	clock.Advance(3 * time.Second)
	r := waitfor.Recv(t, done, "the call to return")
	if r.stop != acpclient.StopCancelled || !errors.Is(r.err, ErrCancelIgnored) {
		t.Fatalf("Prompt = %q, %v; want cancelled, ErrCancelIgnored", r.stop, r.err)
	}
	end := rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	if end.StopReason != acpclient.StopCancelled || !errors.Is(end.Err, ErrCancelIgnored) {
		t.Errorf("turn_end %q %v", end.StopReason, end.Err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for running(scriptPath) {
		if time.Now().After(deadline) {
			t.Fatal("the agent that ignored the cancel still runs")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("again")); err != nil {
		t.Errorf("next Prompt, on a new process: %v", err)
	}
}

// SetModel during a turn races nothing: the model it records is read by
// the agent's usage updates (the context window) and by the record, both
// under the session's lock (run with -race).
func TestSetModelDuringUsageUpdates(t *testing.T) {
	var steps []acptest.Step
	for i := range 200 {
		steps = append(steps, update(fmt.Sprintf(`{"sessionUpdate":"usage_update","used":%d,"size":0}`, 1000+i)))
	}
	steps = append(steps, acptest.Step{Text: "done"})
	script := acptest.Script{
		NewSession: acptest.NewSessionScript{
			Models: raw(`{"currentModelId":"small","availableModels":[{"modelId":"small","name":"Small"},{"modelId":"big","name":"Big"}]}`)},
		Prompts: []acptest.Turn{{Steps: steps}},
	}
	h, rec := newHostAndRecorder(t, nil)
	cfg := agentConfig(t, "mdl", script)
	// No window for "small": while it is selected every usage update asks
	// for the window again, reading the model.
	cfg.Provider = &Provider{ContextWindow: func(model string) int64 { return map[string]int64{"big": 1e6}[model] }}
	b, err := h.Start(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Store: NewFileStore(filepath.Join(t.TempDir(), "s.json"))})
	if err != nil {
		t.Fatal(err)
	}
	turn := make(chan error, 1)
	go func() { _, err := s.Prompt(ctxT(t), acpclient.TextBlock("go")); turn <- err }()
	policies := make(chan struct{})
	go func() { // SetPolicy saves the record, reading the model too
		defer close(policies)
		for range 20 {
			s.SetPolicy(Policy{Mode: ModeBuild})
		}
	}()
	defer func() { <-policies }()
	for i := range 20 {
		if err := s.SetModel(ctxT(t), []string{"big", "small"}[i%2]); err != nil {
			t.Fatalf("SetModel during a turn: %v", err)
		}
	}
	if err := waitfor.Recv(t, turn, "turn"); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("done", func(ev Event) bool { return ev.Text == "done" })
}

// An update for a row of the previous turn that arrives while the next
// turn runs (the agent was slow to report it) is a late word on that row:
// tagged Late, numbered with its own turn, and no row of the new turn.
func TestLateUpdateDuringTheNextTurnStaysOnItsRow(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{
		{Match: "one", Steps: []acptest.Step{
			update(`{"sessionUpdate":"tool_call","toolCallId":"call_2","title":"Edit","status":"pending"}`),
			update(`{"sessionUpdate":"tool_call_update","toolCallId":"call_2","status":"failed"}`),
		}},
		{Match: "two", Steps: []acptest.Step{
			update(`{"sessionUpdate":"tool_call_update","toolCallId":"call_2","content":[{"type":"content","content":{"type":"text","text":"rejected"}}]}`),
			{Text: "turn two"},
		}},
	}}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), agentConfig(t, "late2", script))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"one", "two"} {
		if _, err := s.Prompt(ctxT(t), acpclient.TextBlock(p)); err != nil {
			t.Fatal(err)
		}
	}
	rec.waitFor("turn two's end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Turn == 2 })
	var late *Event
	for _, ev := range rec.snapshot() {
		if ev.Tool == nil || ev.Tool.ID != "call_2" {
			continue
		}
		if ev.Turn == 2 {
			t.Errorf("turn 2 has a call_2 row: %s %+v", ev.Kind, ev.Tool)
		}
		if len(ev.Tool.Content) > 0 {
			late = &ev
		}
	}
	if late == nil || late.Kind != KindToolUpdate || !late.Late || late.Turn != 1 || late.Tool.Status != "failed" {
		t.Fatalf("the late update: %+v, want a Late tool_update of turn 1 on the failed row", late)
	}
}

// The live view lets go of a finished row of an earlier turn; a late word
// on it does not bring it back into the current turn's rows.
func TestViewIgnoresLateWordsOnFinishedRowsItLetGo(t *testing.T) {
	var v SessionView
	v.Apply(Event{Key: "k", Kind: KindTurnStart, Turn: 1})
	v.Apply(Event{Key: "k", Kind: KindToolStart, Turn: 1, Tool: &ToolCall{ID: "call_2", Status: "pending"}})
	v.Apply(Event{Key: "k", Kind: KindToolEnd, Turn: 1, Tool: &ToolCall{ID: "call_2", Status: "failed"}})
	v.Apply(Event{Key: "k", Kind: KindTurnEnd, Turn: 1})
	v.Apply(Event{Key: "k", Kind: KindTurnStart, Turn: 2})
	v.Apply(Event{Key: "k", Kind: KindToolUpdate, Turn: 1, Late: true, Tool: &ToolCall{ID: "call_2", Status: "failed"}})
	if len(v.Tools) != 0 {
		t.Fatalf("rows during turn 2: %+v", v.Tools)
	}
}
