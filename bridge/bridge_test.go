package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/fakeclock"
	"github.com/acphost/acphost/internal/waitfor"
)

// turnScript is a turn with streamed text, a gated tool call and a late
// update after the prompt's answer.
var turnScript = acptest.Script{
	NewSession: acptest.NewSessionScript{
		SessionIDs: []string{"sess_A"},
		// The agent announces its commands before session/new answers.
		Steps: []acptest.Step{update(`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"compact","description":"Compact"}]}`)},
	},
	Prompts: []acptest.Turn{{
		Steps: []acptest.Step{
			{Text: "Let me "},
			{Text: "edit."},
			update(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Write a.txt","kind":"edit","status":"pending"}`),
			{Permission: &acptest.Permission{ToolCall: raw(`{"toolCallId":"t1"}`), Options: []acptest.PermissionOption{
				{OptionID: "always", Name: "Always", Kind: "allow_always"},
				{OptionID: "allow", Name: "Allow", Kind: "allow_once"},
				{OptionID: "reject", Name: "Reject", Kind: "reject_once"},
			}}},
			update(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Write a.txt","status":"in_progress"}`),
			update(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`),
			{Text: "Done."},
		},
		After: []acptest.Step{update(`{"sessionUpdate":"usage_update","used":1200,"size":200000}`)},
	}},
}

func TestTurnEventsArriveInAgentOrder(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	rec.setPermissionAnswer(func(p *PermissionRequest) { p.Allow() })
	b, err := h.Start(context.Background(), agentConfig(t, "a1", turnScript))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w", Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	stop, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("go"))
	if err != nil || stop != acpclient.StopEndTurn {
		t.Fatalf("Prompt = %q, %v", stop, err)
	}
	rec.waitFor("late usage", func(ev Event) bool { return ev.Kind == KindUsage })
	got := kinds(rec.of("a1", "sess_A"))
	want := []string{
		"commands", "session", "authority",
		"turn_start:go", "text:Let me ", "text:edit.",
		"tool_start:t1:pending", "permission:t1", "decision",
		"text:permission: selected allow",
		"tool_update:t1:in_progress", "tool_end:t1:completed",
		"text:Done.", "turn_end:end_turn",
		"usage:true:1200/200000(late)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n got %q\nwant %q", got, want)
	}
	for i, ev := range rec.of("a1", "sess_A") {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
	}
}

func TestPermissionPolicies(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Permission: &acptest.Permission{ToolCall: raw(`{"toolCallId":"never-announced","title":"rm -rf"}`), Options: []acptest.PermissionOption{
			{OptionID: "yes-always", Name: "Always", Kind: "allow_always"},
			{OptionID: "yes", Name: "Yes", Kind: "allow_once"},
			{OptionID: "no", Name: "No", Kind: "reject_once"},
			{OptionID: "weird", Name: "?", Kind: "allow_sometimes"},
		}}},
	}}}}
	tests := []struct {
		name     string
		policy   Policy
		app      func(*PermissionRequest)
		want     string
		askedApp bool
	}{
		{"ask cancels", Policy{Mode: ModeAsk}, nil, "permission: cancelled", false},
		{"plan cancels", Policy{Mode: ModePlan}, nil, "permission: cancelled", false},
		{"full allows once", Policy{Mode: ModeFull}, nil, "permission: selected yes", false},
		{"read-only beats full", Policy{Mode: ModeFull, ReadOnly: true}, nil, "permission: cancelled", false},
		{"build asks, app allows", Policy{Mode: ModeBuild}, func(p *PermissionRequest) { p.Allow() }, "permission: selected yes", true},
		{"build asks, app rejects", Policy{Mode: ModeBuild}, func(p *PermissionRequest) { p.Reject() }, "permission: selected no", true},
		{"unknown mode fails closed to asking", Policy{Mode: "yolo"}, func(p *PermissionRequest) { p.Reject() }, "permission: selected no", true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, rec := newHostAndRecorder(t, nil)
			rec.setPermissionAnswer(tt.app)
			id := fmt.Sprintf("p%d", i)
			b, err := h.Start(context.Background(), agentConfig(t, id, script))
			if err != nil {
				t.Fatal(err)
			}
			s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w", Policy: tt.policy})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("x")); err != nil {
				t.Fatal(err)
			}
			rec.waitFor(tt.want, func(ev Event) bool { return ev.Kind == KindText && ev.Text == tt.want })
			rec.waitFor("decision", func(ev Event) bool { return ev.Kind == KindDecision })
			asked := askedApp(rec.of(id, s.ID()))
			for _, ev := range rec.of(id, s.ID()) {
				if ev.Kind == KindPermission {
					if len(ev.Permission.Options) != 4 || ev.Tool.Title != "rm -rf" {
						t.Errorf("permission event %+v", ev.Permission)
					}
				}
			}
			if asked != tt.askedApp {
				t.Errorf("app asked = %v, want %v", asked, tt.askedApp)
			}
			// The never-announced tool call still got exactly one row.
			starts := 0
			for _, ev := range rec.of(id, s.ID()) {
				if ev.Kind == KindToolStart {
					starts++
				}
			}
			if starts != 1 {
				t.Errorf("%d tool_start events for one tool call", starts)
			}
		})
	}
}

func TestCancelAnswersPendingPermissions(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		update(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Run","status":"pending"}`),
		{Permission: &acptest.Permission{ToolCall: raw(`{"toolCallId":"t1"}`)}},
		{WaitCancel: true},
	}}}}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), agentConfig(t, "c", script))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w"})
	done := make(chan string, 1)
	go func() {
		stop, _ := s.Prompt(waitfor.Context(t), acpclient.TextBlock("x"))
		done <- stop
	}()
	ev := rec.waitFor("permission", func(ev Event) bool { return ev.Kind == KindPermission })
	if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("overlap")); !errors.Is(err, ErrBusy) {
		t.Errorf("second prompt during a turn: %v, want ErrBusy", err)
	}
	s.Cancel()
	if stop := waitfor.Recv(t, done, "the call to return"); stop != acpclient.StopCancelled {
		t.Fatalf("stop reason %q", stop)
	}
	if err := ev.Permission.Allow(); !errors.Is(err, ErrAlreadyAnswered) {
		t.Errorf("answering a cancelled request: %v", err)
	}
	rec.waitFor("agent saw cancelled", func(ev Event) bool { return ev.Text == "permission: cancelled" })
	rec.waitFor("tool row ended", func(ev Event) bool { return ev.Kind == KindToolEnd && ev.Tool.Status == ToolUnfinished })
}

func TestWatchdogCancelsSilentTurn(t *testing.T) {
	clock := fakeClock{fakeclock.New()}
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{{Text: "thinking..."}, {WaitCancel: true}}}}}
	h, rec := newHostAndRecorder(t, nil)
	cfg := agentConfig(t, "w", script)
	cfg.Clock = clock
	b, err := h.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w"})
	errc := make(chan error, 1)
	go func() { _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("x")); errc <- err }()
	rec.waitFor("text", func(ev Event) bool { return ev.Text == "thinking..." })
	if !clock.WaitForTimers(1, 5*time.Second) {
		t.Fatal("watchdog not armed")
	}
	clock.Advance(9 * time.Minute)
	select {
	case err := <-errc:
		t.Fatalf("turn ended before the timeout: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	clock.Advance(time.Minute)
	err = waitfor.Recv(t, errc, "the call to return its error")
	if !errors.Is(err, ErrInactive) {
		t.Fatalf("Prompt error %v, want ErrInactive", err)
	}
	end := rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	if !errors.Is(end.Err, ErrInactive) {
		t.Errorf("turn_end carries %v", end.Err)
	}
	if !b.Running() {
		t.Error("an agent that honoured the cancel was killed")
	}
}

func TestWatchdogKillsAgentThatIgnoresCancel(t *testing.T) {
	clock := fakeClock{fakeclock.New()}
	script := acptest.Script{Prompts: []acptest.Turn{{IgnoreCancel: true, Steps: []acptest.Step{{Hang: true}}}}}
	h, rec := newHostAndRecorder(t, nil)
	cfg := agentConfig(t, "k", script)
	cfg.Clock = clock
	b, err := h.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w"})
	errc := make(chan error, 1)
	go func() { _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("x")); errc <- err }()
	rec.waitFor("turn start", func(ev Event) bool { return ev.Kind == KindTurnStart })
	clock.WaitForTimers(1, 5*time.Second)
	clock.Advance(10 * time.Minute)
	if !clock.WaitForTimers(1, 5*time.Second) {
		t.Fatal("grace timer not armed")
	}
	clock.Advance(10 * time.Second)
	if err := waitfor.Recv(t, errc, "the call to return its error"); !errors.Is(err, ErrInactive) {
		t.Fatalf("Prompt error %v", err)
	}
	rec.waitFor("exited", func(ev Event) bool { return ev.Kind == KindExited })
	if b.Running() {
		t.Fatal("unresponsive agent still running")
	}
	evs := kinds(rec.of("k", s.ID()))
	if evs[len(evs)-1] != "turn_end:cancelled" {
		t.Errorf("last session event %q", evs[len(evs)-1])
	}
}

func TestWatchdogIgnoresTimeWaitingForTheUser(t *testing.T) {
	clock := fakeClock{fakeclock.New()}
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Permission: &acptest.Permission{}}, {Text: "after"},
	}}}}
	h, rec := newHostAndRecorder(t, nil)
	cfg := agentConfig(t, "u", script)
	cfg.Clock = clock
	b, _ := h.Start(context.Background(), cfg)
	s, _ := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w", Policy: Policy{Mode: ModeBuild}})
	errc := make(chan error, 1)
	go func() { _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("x")); errc <- err }()
	ev := rec.waitFor("permission", func(ev Event) bool { return ev.Kind == KindPermission })
	clock.Advance(3 * time.Hour) // the user went to lunch
	time.Sleep(20 * time.Millisecond)
	if err := ev.Permission.Allow(); err != nil {
		t.Fatalf("permission was answered behind the user's back: %v", err)
	}
	if err := waitfor.Recv(t, errc, "the call to return its error"); err != nil {
		t.Fatal(err)
	}
}

func TestAgentDeathMidTurnThenNativeResume(t *testing.T) {
	dir := t.TempDir()
	_ = dir
	exit := 3
	script := acptest.Script{
		NewSession:  acptest.NewSessionScript{SessionIDs: []string{"sess_D"}},
		LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_D"}, Replay: []acptest.Step{{Text: "old answer"}}},
		Prompts: []acptest.Turn{
			{Match: "crash", Steps: []acptest.Step{{Text: "partial"}, {Stderr: "panic: model backend exploded"}, {Exit: &exit}}},
			{Steps: []acptest.Step{{Text: "fresh"}}},
		},
	}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), agentConfig(t, "d", script))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w"})
	_, err = s.Prompt(waitfor.Context(t), acpclient.TextBlock("crash now"))
	var exitErr *acpclient.ExitError
	if !errors.As(err, &exitErr) || !strings.Contains(err.Error(), "backend exploded") {
		t.Fatalf("Prompt error %v: want the exit with stderr", err)
	}
	exited := rec.waitFor("exited", func(ev Event) bool { return ev.Kind == KindExited })
	if !strings.Contains(fmt.Sprint(exited.Err), "exit status 3") {
		t.Errorf("exited event error %v", exited.Err)
	}
	if dead, ok := h.Bridge("d"); !ok || dead != b || dead.Running() {
		t.Errorf("Bridge(d) = %v, %v: want the dead bridge, not running", dead, ok)
	}
	if all := h.Bridges(); len(all) != 1 || all[0] != b {
		t.Errorf("Bridges() = %v: want the dead bridge listed", all)
	}
	got := kinds(rec.snapshot(), KindSession, KindAuthority, KindCommands)
	want := []string{"turn_start:crash now", "text:partial", "error", "turn_end:cancelled", "exited"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	// The next prompt starts a new process and loads the session.
	stop, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("again"))
	if err != nil || stop != acpclient.StopEndTurn {
		t.Fatalf("prompt after crash: %q %v", stop, err)
	}
	if again, ok := h.Bridge("d"); !ok || again != b || !again.Running() {
		t.Errorf("Bridge(d) after the restart = %v, %v: want it running", again, ok)
	}
	ready := rec.waitFor("resumed", func(ev Event) bool { return ev.Kind == KindSession && ev.SessionReady.Resumed })
	if ready.Session != "sess_D" {
		t.Errorf("resumed session %q", ready.Session)
	}
	rec.waitFor("replay", func(ev Event) bool { return ev.Text == "old answer" && ev.Replay })
	rec.waitFor("fresh", func(ev Event) bool { return ev.Text == "fresh" && !ev.Replay })
}

func TestLoadFallsBackToNew(t *testing.T) {
	script := acptest.Script{NewSession: acptest.NewSessionScript{SessionIDs: []string{"sess_new"}}}
	h, rec := newHostAndRecorder(t, nil)
	b, _ := h.Start(context.Background(), agentConfig(t, "f", script))
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w", ResumeID: "sess_gone"})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() != "sess_new" {
		t.Fatalf("session %q", s.ID())
	}
	ev := rec.waitFor("ready", func(ev Event) bool { return ev.Kind == KindSession })
	if ev.SessionReady.Resumed || ev.SessionReady.ResumeError == "" {
		t.Errorf("ready %+v: the app must be told the resume failed", ev.SessionReady)
	}
}

func TestReplayIsTagged(t *testing.T) {
	script := acptest.Script{LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_old"}, Replay: []acptest.Step{
		update(`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"question"}}`),
		{Text: "answer"},
		update(`{"sessionUpdate":"tool_call","toolCallId":"r1","title":"Read","status":"completed"}`),
	}}}
	h, rec := newHostAndRecorder(t, nil)
	b, _ := h.Start(context.Background(), agentConfig(t, "r", script))
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w", ResumeID: "sess_old"})
	if err != nil {
		t.Fatal(err)
	}
	rec.waitFor("authority", func(ev Event) bool { return ev.Kind == KindAuthority })
	got := kinds(rec.of("r", s.ID()))
	want := []string{"user_text:question(replay)", "text:answer(replay)", "tool_start:r1:completed(replay)", "tool_end:r1:completed(replay)", "session", "authority"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

func TestUsageAndCompaction(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		update(`{"sessionUpdate":"usage_update","used":50000,"size":200000,"cost":{"amount":0.5,"currency":"USD"}}`),
		update(`{"sessionUpdate":"compaction_update","compactionId":"c1","status":"in_progress"}`),
		update(`{"sessionUpdate":"compaction_update","compactionId":"c1","status":"completed","summary":[{"type":"text","text":"we did things"}]}`),
		{Notify: &acptest.Notification{Method: "_vendor/compaction", Params: raw(`{"sessionId":"sess_1","status":"skipped"}`)}},
		{Notify: &acptest.Notification{Method: "_vendor/other", Params: raw(`{"sessionId":"sess_1","x":1}`)}},
		update(`{"sessionUpdate":"usage_update","used":9000,"size":200000}`),
		update(`{"sessionUpdate":"future_update_kind","x":1}`),
	}}}}
	h, rec := newHostAndRecorder(t, nil)
	cfg := agentConfig(t, "u", script)
	cfg.Provider = &Provider{Name: "vendor", Notification: func(method string, params json.RawMessage) (string, []Event, bool) {
		if method != "_vendor/compaction" {
			return "", nil, false
		}
		return "sess_1", []Event{{Kind: KindCompaction, Compaction: &Compaction{Status: CompactionSkipped}}}, true
	}}
	b, _ := h.Start(context.Background(), cfg)
	s, _ := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w"})
	if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("x")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	got := kinds(rec.of("u", s.ID()), KindSession, KindAuthority, KindTurnStart, KindTurnEnd)
	want := []string{
		"usage:true:50000/200000",
		"compaction:started", "compaction:completed", "usage:false:0/200000",
		"compaction:skipped", "ext:_vendor/other",
		"usage:true:9000/200000", "ext:",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q, want %q%s", got, want, rec.summary())
	}
	for _, ev := range rec.of("u", s.ID()) {
		if ev.Kind == KindCompaction && ev.Compaction.Status == CompactionCompleted && ev.Compaction.Summary != "we did things" {
			t.Errorf("summary %q", ev.Compaction.Summary)
		}
		if ev.Kind == KindExt && ev.Method == "" && !strings.Contains(string(ev.Raw), "future_update_kind") {
			t.Errorf("unknown update lost its raw JSON: %s", ev.Raw)
		}
	}
}

func TestFileAccessFollowsPolicy(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{ReadFile: &acptest.ReadFile{Path: "/w/a.txt"}},
		{ReadFile: &acptest.ReadFile{Path: "/w/missing.txt"}},
		{WriteFile: &acptest.WriteFile{Path: "/w/b.txt", Content: "new"}},
	}}}}
	for _, tt := range []struct {
		mode      Mode
		readOnly  bool
		wantWrite string
	}{
		{ModeBuild, false, "write /w/b.txt: ok"},
		{ModeAsk, false, "Ask mode"},
		{ModePlan, false, "Plan mode"},
		{ModeFull, true, "read-only"},
	} {
		t.Run(string(tt.mode), func(t *testing.T) {
			h, rec := newHostAndRecorder(t, nil)
			files := &memFiles{files: map[string]string{"/w/a.txt": "hello\r\nworld"}}
			b, _ := h.Start(context.Background(), agentConfig(t, "fs", script))
			s, _ := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w", Files: files, Policy: Policy{Mode: tt.mode, ReadOnly: tt.readOnly}})
			if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("x")); err != nil {
				t.Fatal(err)
			}
			rec.waitFor("read", func(ev Event) bool { return ev.Text == "read /w/a.txt: hello\r\nworld" })
			rec.waitFor("missing", func(ev Event) bool {
				return strings.HasPrefix(ev.Text, "read /w/missing.txt: error -32002")
			})
			w := rec.waitFor("write", func(ev Event) bool { return strings.HasPrefix(ev.Text, "write /w/b.txt") })
			if !strings.Contains(w.Text, tt.wantWrite) {
				t.Errorf("write answered %q, want %q", w.Text, tt.wantWrite)
			}
			_, written := files.get("/w/b.txt")
			if written != (tt.wantWrite == "write /w/b.txt: ok") {
				t.Errorf("file written = %v", written)
			}
		})
	}
}

func TestTenAgentsOneStream(t *testing.T) {
	const agents, chunks = 10, 200
	h, rec := newHostAndRecorder(t, nil)
	sessions := make([]*Session, agents)
	for i := range agents {
		var steps []acptest.Step
		for j := range chunks {
			steps = append(steps, acptest.Step{Text: fmt.Sprintf("[%d.%d]", i, j)})
		}
		b, err := h.Start(context.Background(), agentConfig(t, fmt.Sprintf("agent%d", i), acptest.Script{Prompts: []acptest.Turn{{Steps: steps}}}))
		if err != nil {
			t.Fatal(err)
		}
		if sessions[i], err = b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w"}); err != nil {
			t.Fatal(err)
		}
	}
	errc := make(chan error, agents)
	for _, s := range sessions {
		go func() { _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("go")); errc <- err }()
	}
	for range agents {
		if err := waitfor.Recv(t, errc, "the call to return its error"); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range sessions {
		id := fmt.Sprintf("agent%d", i)
		rec.waitFor("turn end "+id, func(ev Event) bool { return ev.Bridge == id && ev.Kind == KindTurnEnd })
		var text strings.Builder
		for k, ev := range rec.of(id, s.ID()) {
			if ev.Seq != uint64(k+1) {
				t.Fatalf("%s: event %d has seq %d", id, k, ev.Seq)
			}
			if ev.Kind == KindText {
				text.WriteString(ev.Text)
			}
		}
		var want strings.Builder
		for j := range chunks {
			fmt.Fprintf(&want, "[%d.%d]", i, j)
		}
		if text.String() != want.String() {
			t.Fatalf("%s: text lost, reordered or crossed:\n got %.200s\nwant %.200s", id, text.String(), want.String())
		}
	}
}
