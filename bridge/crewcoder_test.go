package bridge

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/internal/acptest"
)

func TestCrewCoderLaunchArgs(t *testing.T) {
	bin := acptest.BuildBinary(t)
	tests := []struct {
		name, approval, profile string
		want                    []string
	}{
		{"defaults to review and the configured profile", "", "", []string{"acp", "--approval", "review"}},
		{"a valid policy passes", "full-access", "", []string{"acp", "--approval", "full-access"}},
		{"sandboxed passes", "sandboxed", "", []string{"acp", "--approval", "sandboxed"}},
		{"an invalid policy fails closed to review", "yolo", "", []string{"acp", "--approval", "review"}},
		{"a concrete profile adds --mode", "never", "crewcoder", []string{"acp", "--approval", "never", "--mode", "crewcoder"}},
		{"extension profile", "", "extension", []string{"acp", "--approval", "review", "--mode", "extension"}},
		{"the host's modes never reach --mode", "", "build", []string{"acp", "--approval", "review"}},
		{"full is not a profile", "", "full", []string{"acp", "--approval", "review"}},
		{"configured default omits --mode", "always", "default", []string{"acp", "--approval", "always"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, res, err := CrewCoderProfile.Command(context.Background(), LaunchOptions{Binary: bin, Approval: tt.approval, AgentProfile: tt.profile})
			if err != nil {
				t.Fatal(err)
			}
			if res.Source != FoundOverride || cmd.Path != bin {
				t.Errorf("resolution %+v", res)
			}
			if !reflect.DeepEqual(cmd.Args, tt.want) {
				t.Errorf("args %q, want %q", cmd.Args, tt.want)
			}
		})
	}
}

func TestCrewCoderAdvertisesCompact(t *testing.T) {
	tests := []struct {
		meta string
		want bool
	}{
		{`{"crewcoder/sessionCompact":{"method":"session/compact"}}`, true},
		{`{"crewcoder/sessionCompact":{"method":"session/compact_v2"}}`, false},
		{`{"crewcoder/sessionCompact":true}`, false},
		{`{"other":{"method":"session/compact"}}`, false},
		{``, false},
	}
	for _, tt := range tests {
		got := CrewCoderAdvertisesCompact(&acpclient.InitializeResponse{Meta: []byte(tt.meta)})
		if got != tt.want {
			t.Errorf("%s: got %v", tt.meta, got)
		}
	}
}

// crewCoderScript is a CrewCoder speaking its dialect, written from seed 000.
func crewCoderScript() acptest.Script {
	return acptest.Script{
		Initialize: acptest.InitializeScript{Meta: raw(`{"crewcoder/sessionCompact":{"method":"session/compact"}}`)},
		NewSession: acptest.NewSessionScript{SessionIDs: []string{"cc_1"},
			Models: raw(`{"currentModelId":"codex:gpt-5.6-sol","availableModels":[{"modelId":"codex:gpt-5.6-sol","name":"GPT"},{"modelId":"opencode:claude-sonnet-4-6","name":"Sonnet"}]}`)},
		LoadSession: acptest.LoadSessionScript{Sessions: []string{"cc_1"}},
		Methods: map[string]acptest.Reply{
			"session/set_external_directories": {},
			"session/set_reasoning_effort":     {},
			"session/follow_up":                {},
			"session/compact": {Steps: []acptest.Step{
				{Notify: &acptest.Notification{Method: "_crewcoder/compaction_update", Params: raw(`{"sessionId":"cc_1","status":"started","intent":"manual","message":"Compacting"}`)}},
				{Notify: &acptest.Notification{Method: "_crewcoder/compaction_update", Params: raw(`{"sessionId":"cc_1","status":"completed","intent":"manual","summary":"We fixed the parser."}`)}},
			}, Result: raw(`{"summary":"We fixed the parser."}`)},
		},
	}
}

func startCrewCoder(t *testing.T, h *Host, script acptest.Script, o LaunchOptions) (*Bridge, *installed) {
	t.Helper()
	in := install(t, t.TempDir(), "crewcoder", script, "")
	o.Resolver = &Resolver{Env: []string{"PATH=" + filepath.Dir(in.Path), "HOME=" + t.TempDir()}, NoLoginShell: true}
	b, err := h.StartProfile(ctxT(t), CrewCoderProfile, o, Config{ID: "cc"})
	if err != nil {
		t.Fatal(err)
	}
	return b, in
}

func TestCrewCoderHandshakeOrder(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	b, in := startCrewCoder(t, h, crewCoderScript(), LaunchOptions{})
	if got := b.Launch().Resolution().Source; got != FoundPATH {
		t.Errorf("binary found in %q, want PATH", got)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Model: "opencode:claude-sonnet-4-6", Effort: "high", Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	rec.waitFor("session ready", func(ev Event) bool { return ev.Kind == KindSession })
	msgs := in.received(t)
	want := []string{"initialize", "session/new", "session/set_external_directories", "session/set_model", "session/set_reasoning_effort"}
	if got := methodsOf(msgs); !reflect.DeepEqual(got, want) {
		t.Fatalf("handshake %q, want %q", got, want)
	}
	// The complete grant list is sent even when empty, so removed access
	// cannot survive in the native session.
	dirs := paramsOf(t, msgs, "session/set_external_directories")
	if d, ok := dirs["directories"].([]any); !ok || len(d) != 0 || dirs["sessionId"] != s.ID() {
		t.Errorf("set_external_directories params %v", dirs)
	}
	if e := paramsOf(t, msgs, "session/set_reasoning_effort"); e["effort"] != "high" {
		t.Errorf("effort params %v", e)
	}
	if n := paramsOf(t, msgs, "session/new"); len(n["mcpServers"].([]any)) != 0 {
		t.Errorf("session/new params %v", n)
	}
	if got := in.launches(t); !reflect.DeepEqual(got, [][]string{{"acp", "--approval", "review"}}) {
		t.Errorf("launches %q", got)
	}
}

func TestCrewCoderDirectoryFailureBlocksPrompts(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	script := crewCoderScript()
	script.Methods["session/set_external_directories"] = acptest.Reply{Error: &acptest.Error{Code: -32602, Message: "directory /nope is not allowed"}}
	b, in := startCrewCoder(t, h, script, LaunchOptions{})
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", ExternalDirectories: []string{"/nope"}})
	if err != nil {
		t.Fatal(err)
	}
	rec.waitFor("unusable error", func(ev Event) bool { return ev.Kind == KindError && errors.Is(ev.Err, ErrUnusable) })
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("hi")); !errors.Is(err, ErrUnusable) {
		t.Fatalf("Prompt error %v, want ErrUnusable", err)
	}
	if slices.Contains(methodsOf(in.received(t)), "session/prompt") {
		t.Fatal("a prompt reached an agent with stale directory grants")
	}
	if d := paramsOf(t, in.received(t), "session/set_external_directories")["directories"].([]any); len(d) != 1 || d[0] != "/nope" {
		t.Errorf("directories %v", d)
	}
}

func TestCrewCoderVendorData(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	script := crewCoderScript()
	script.Prompts = []acptest.Turn{{Steps: []acptest.Step{
		update(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Think","kind":"think","name":"think","status":"pending","_meta":{"crewcoder/tool":{"name":"crewcoder_clarify"}}}`),
		update(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`),
		update(`{"sessionUpdate":"usage_update","used":9999,"size":1,"_meta":{"crewcoder/usage":{"lastInputTokens":150000,"contextWindow":200000}}}`),
		{Notify: &acptest.Notification{Method: "_crewcoder/compaction_update", Params: raw(`{"sessionId":"cc_1","status":"started","automatic":true,"progress":10,"message":"Compacting context"}`)}},
		{Notify: &acptest.Notification{Method: "_crewcoder/compaction_update", Params: raw(`{"sessionId":"cc_1","status":"completed","automatic":true}`)}},
		// The context-token drop after compaction is not a second compaction.
		update(`{"sessionUpdate":"usage_update","used":1,"size":1,"_meta":{"crewcoder/usage":{"lastInputTokens":20000,"contextWindow":200000}}}`),
		{Notify: &acptest.Notification{Method: "_crewcoder/compaction_update", Params: raw(`{"sessionId":"cc_1","status":"skipped","automatic":true}`)}},
	}, Meta: raw(`{"crewcoder/usage":{"lastInputTokens":21000,"contextWindow":200000}}`), Usage: raw(`{"totalTokens":5,"inputTokens":3,"outputTokens":2}`)}}
	b, _ := startCrewCoder(t, h, script, LaunchOptions{})
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	var got []string
	for _, ev := range rec.of("cc", s.ID()) {
		switch ev.Kind {
		case KindToolStart, KindToolEnd:
			got = append(got, string(ev.Kind)+":"+ev.Tool.Name+":"+ev.Tool.Kind)
		case KindUsage, KindCompaction, KindTurnEnd:
			got = append(got, describe(ev))
		}
	}
	want := []string{
		"tool_start:crewcoder_clarify:think", "tool_end:crewcoder_clarify:think",
		"usage:true:150000/200000",
		"compaction:started", "compaction:completed", "usage:false:0/200000",
		"usage:true:20000/200000",
		"compaction:skipped",
		"usage:true:21000/200000", "turn_end:end_turn",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events\n got %q\nwant %q", got, want)
	}
	for _, ev := range rec.of("cc", s.ID()) {
		if ev.Kind == KindCompaction && ev.Compaction.Status == CompactionStarted {
			if !ev.Compaction.Automatic || ev.Compaction.Progress != 10 || ev.Compaction.Message != "Compacting context" || ev.Compaction.Summary != "" {
				t.Errorf("automatic compaction %+v", ev.Compaction)
			}
		}
	}
	if u := s.Usage(); !u.Known || u.Used != 21000 {
		t.Errorf("meter after a skipped compaction %+v", u)
	}
}

func TestCrewCoderPromptErrorPrefersDataMessage(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	script := crewCoderScript()
	script.Prompts = []acptest.Turn{{Steps: []acptest.Step{{Text: "Trying"}},
		Error: &acptest.Error{Code: -32603, Message: "Internal error", Data: raw(`{"message":"codex: usage limit reached, try again at 14:00"}`)}}}
	b, _ := startCrewCoder(t, h, script, LaunchOptions{})
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Prompt(ctxT(t), acpclient.TextBlock("go"))
	if err == nil || !strings.HasPrefix(err.Error(), "codex: usage limit reached, try again at 14:00") {
		t.Fatalf("Prompt error %v", err)
	}
	rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	got := kinds(rec.of("cc", s.ID()), KindSession)
	want := []string{"turn_start:go", "text:Trying", "error", "turn_end:cancelled"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

func TestCrewCoderNativeCompactKeepsSession(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	b, in := startCrewCoder(t, h, crewCoderScript(), LaunchOptions{})
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	summary, err := s.Compact(ctxT(t))
	if err != nil || summary != "We fixed the parser." {
		t.Fatalf("Compact = %q, %v", summary, err)
	}
	rec.waitFor("meter reset", func(ev Event) bool { return ev.Kind == KindUsage })
	if s.ID() != "cc_1" {
		t.Errorf("session id changed to %s", s.ID())
	}
	got := kinds(rec.of("cc", "cc_1"), KindSession)
	want := []string{"compaction:started", "compaction:completed", "usage:false:0/0"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q, want %q (no turn_start, one report per update)", got, want)
	}
	for _, ev := range rec.of("cc", "cc_1") {
		if ev.Kind == KindCompaction && ev.Compaction.Status == CompactionCompleted && ev.Compaction.Summary != "We fixed the parser." {
			t.Errorf("completed compaction without the summary: %+v", ev.Compaction)
		}
	}
	methods := methodsOf(in.received(t))
	if want := []string{"initialize", "session/new", "session/set_external_directories", "session/compact"}; !reflect.DeepEqual(methods, want) {
		t.Errorf("methods %q, want %q", methods, want)
	}
	if len(in.launches(t)) != 1 {
		t.Errorf("the agent was restarted: %q", in.launches(t))
	}
}

func TestCrewCoderCompactNeedsAdvertisement(t *testing.T) {
	h, _ := newHostAndRecorder(t, nil)
	script := crewCoderScript()
	script.Initialize.Meta = nil
	b, in := startCrewCoder(t, h, script, LaunchOptions{})
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Compact(ctxT(t)); !errors.Is(err, acpclient.ErrUnsupported) {
		t.Fatalf("Compact error %v, want ErrUnsupported for the app's fallback", err)
	}
	if slices.Contains(methodsOf(in.received(t)), "session/compact") {
		t.Fatal("session/compact sent without the advertisement")
	}
}

func TestCrewCoderFollowUp(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	script := crewCoderScript()
	script.Prompts = []acptest.Turn{{Steps: []acptest.Step{{Text: "working"}, {WaitCancel: true}}}}
	b, in := startCrewCoder(t, h, script, LaunchOptions{})
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FollowUp(ctxT(t), "too early"); err == nil {
		t.Fatal("FollowUp without a running turn succeeded")
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Prompt(ctxT(t), acpclient.TextBlock("go"))
		done <- err
	}()
	rec.waitFor("turn output", func(ev Event) bool { return ev.Kind == KindText && ev.Text == "working" })
	if err := s.FollowUp(ctxT(t), "also update the docs"); err != nil {
		t.Fatal(err)
	}
	// The exact shape of CrewCoder's source: the text as one string.
	var sent []string
	for _, m := range in.received(t) {
		if m.Method == "session/follow_up" {
			sent = append(sent, string(m.Params))
		}
	}
	if want := []string{`{"sessionId":"cc_1","message":"also update the docs"}`}; !reflect.DeepEqual(sent, want) {
		t.Errorf("follow_up params %q, want %q", sent, want)
	}
	if err := s.FollowUp(ctxT(t), "  "); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("an empty follow-up: %v", err)
	}
	s.Cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestCrewCoderRelaunchResumesAndLocksBuild(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	script := crewCoderScript()
	script.Prompts = []acptest.Turn{{Match: "wait", Steps: []acptest.Step{{Text: "busy"}, {WaitCancel: true}}}}
	b, in := startCrewCoder(t, h, script, LaunchOptions{})
	store := NewFileStore(filepath.Join(t.TempDir(), "sessions.json"))
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Policy: Policy{Mode: ModeAsk}, Store: store, StoreKey: "chat-1"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Policy().Mode != ModeAsk {
		t.Fatalf("configured default must not lock the mode: %v", s.Policy())
	}

	// Refused while a turn runs: authority never changes underneath it.
	done := make(chan error, 1)
	go func() {
		_, err := s.Prompt(ctxT(t), acpclient.TextBlock("wait"))
		done <- err
	}()
	rec.waitFor("busy", func(ev Event) bool { return ev.Kind == KindText && ev.Text == "busy" })
	if err := b.Relaunch(ctxT(t), func(o *LaunchOptions) { o.AgentProfile = "crewcoder" }); !errors.Is(err, ErrBusy) {
		t.Fatalf("Relaunch during a turn: %v, want ErrBusy", err)
	}
	s.Cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	if err := b.Relaunch(ctxT(t), func(o *LaunchOptions) { o.AgentProfile = "crewcoder"; o.Approval = "never" }); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"acp", "--approval", "review"}, {"acp", "--approval", "never", "--mode", "crewcoder"}}
	if got := in.launches(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("launches %q, want %q", got, want)
	}
	if got := methodsOf(in.received(t)); !slices.Contains(got, "session/load") || slices.Contains(got, "session/new") {
		t.Fatalf("the new process got %q; want the same session loaded", got)
	}
	if s.ID() != "cc_1" || b.Session("cc_1") != s {
		t.Fatalf("session id %s after relaunch", s.ID())
	}
	if s.Policy().Mode != ModeBuild {
		t.Fatalf("a concrete profile must lock Build, got %v", s.Policy())
	}
	s.SetPolicy(Policy{Mode: ModeFull})
	if s.Policy().Mode != ModeBuild {
		t.Fatalf("SetPolicy escaped the lock: %v", s.Policy())
	}
	// The choices survive an app restart with the session.
	if r, ok, err := store.Load("chat-1"); err != nil || !ok || r.NativeSessionID != "cc_1" || r.AgentMode != "crewcoder" || r.ApprovalPolicy != "never" || r.Mode != "build" {
		t.Fatalf("stored record %+v, %v, %v", r, ok, err)
	}

	// Back to the configured default: the lock goes, the mode stays Build
	// until the user picks another.
	if err := b.Relaunch(ctxT(t), func(o *LaunchOptions) { o.AgentProfile = "" }); err != nil {
		t.Fatal(err)
	}
	if s.Policy().Mode != ModeBuild {
		t.Fatalf("mode after unlocking %v", s.Policy())
	}
	s.SetPolicy(Policy{Mode: ModePlan})
	if s.Policy().Mode != ModePlan {
		t.Fatalf("mode not free after unlocking: %v", s.Policy())
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("hello")); err != nil {
		t.Fatal(err)
	}
	if got := in.launches(t); len(got) != 3 || slices.Contains(got[2], "--mode") {
		t.Fatalf("launches %q", got)
	}
}

// crewCoderCompactionStep sends a _crewcoder/compaction_update session update,
// the form CrewCoder's source sends.
func crewCoderCompactionStep(fields string) acptest.Step {
	return update(`{"sessionUpdate":"_crewcoder/compaction_update",` + fields + `}`)
}

func TestCrewCoderCompactionUpdateKind(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	script := crewCoderScript()
	script.Prompts = []acptest.Turn{{Steps: []acptest.Step{
		update(`{"sessionUpdate":"usage_update","used":1,"size":1,"_meta":{"crewcoder/usage":{"lastInputTokens":150000,"contextWindow":200000}}}`),
		crewCoderCompactionStep(`"status":"started","phase":"summarizing","automatic":true,"percent":40,"message":"Compacting context"`),
		// Skipped: nothing changed, the meter keeps its value.
		crewCoderCompactionStep(`"status":"completed","phase":"skipped","automatic":true,"message":"Nothing to compact"`),
		// The older notification form still counts.
		{Notify: &acptest.Notification{Method: "_crewcoder/compaction_update", Params: raw(`{"sessionId":"cc_1","status":"completed","phase":"skipped","automatic":true}`)}},
		// Applied: the meter is unknown (never 0) until the next report.
		crewCoderCompactionStep(`"status":"completed","phase":"applied","automatic":true,"percent":100`),
		update(`{"sessionUpdate":"usage_update","used":1,"size":1,"_meta":{"crewcoder/usage":{"lastInputTokens":20000,"contextWindow":200000}}}`),
		// A vendor kind that is not CrewCoder's is still passed on.
		update(`{"sessionUpdate":"_crewcoder/other","x":1}`),
	}}}
	b, _ := startCrewCoder(t, h, script, LaunchOptions{})
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	var got []string
	var compactions []*Compaction
	for _, ev := range rec.of("cc", s.ID()) {
		switch ev.Kind {
		case KindUsage, KindCompaction, KindExt:
			got = append(got, describe(ev))
		}
		if ev.Kind == KindCompaction {
			compactions = append(compactions, ev.Compaction)
			if ev.Raw == nil {
				t.Errorf("compaction event without the agent's message: %+v", ev.Compaction)
			}
		}
	}
	want := []string{
		"usage:true:150000/200000",
		"compaction:started", "compaction:skipped", "compaction:skipped",
		"compaction:completed", "usage:false:0/200000",
		"usage:true:20000/200000",
		"ext:",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events\n got %q\nwant %q", got, want)
	}
	if c := compactions[0]; !c.Automatic || c.Progress != 40 || c.Message != "Compacting context" || c.Phase != "summarizing" {
		t.Errorf("started compaction %+v", c)
	}
	if c := compactions[1]; c.Phase != "skipped" || c.Message != "Nothing to compact" {
		t.Errorf("skipped compaction %+v", c)
	}
	if u := s.Usage(); !u.Known || u.Used != 20000 {
		t.Errorf("meter after the next usage report %+v", u)
	}
}

func TestCrewCoderNativeCompactUpdateFormCarriesSummary(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	script := crewCoderScript()
	script.Methods["session/compact"] = acptest.Reply{Steps: []acptest.Step{
		crewCoderCompactionStep(`"status":"started","automatic":false,"percent":0,"message":"Compacting"`),
		crewCoderCompactionStep(`"status":"completed","phase":"applied","automatic":false,"percent":100,"summary":"We fixed the parser."`),
	}, Result: raw(`{"summary":"We fixed the parser."}`)}
	b, _ := startCrewCoder(t, h, script, LaunchOptions{})
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if summary, err := s.Compact(ctxT(t)); err != nil || summary != "We fixed the parser." {
		t.Fatalf("Compact = %q, %v", summary, err)
	}
	rec.waitFor("meter reset", func(ev Event) bool { return ev.Kind == KindUsage })
	if got, want := kinds(rec.of("cc", "cc_1"), KindSession), []string{"compaction:started", "compaction:completed", "usage:false:0/0"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for _, ev := range rec.of("cc", "cc_1") {
		if ev.Kind == KindCompaction && ev.Compaction.Status == CompactionCompleted && (ev.Compaction.Summary != "We fixed the parser." || ev.Compaction.Automatic) {
			t.Errorf("completed compaction %+v", ev.Compaction)
		}
	}
}

// A plain ACP agent has no provider hook: vendor update kinds stay ext.
func TestVendorUpdateKindWithoutProviderIsExt(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		update(`{"sessionUpdate":"_crewcoder/compaction_update","status":"completed","phase":"applied"}`),
	}}}}
	b, err := h.Start(ctxT(t), agentConfig(t, "plain", script))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	if got, want := kinds(rec.of("plain", s.ID()), KindSession), []string{"turn_start:go", "ext:", "turn_end:end_turn"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}
