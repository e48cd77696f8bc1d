package crewcoder

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/bridgetest"
	"github.com/acphost/acphost/internal/fakebin"
	"github.com/acphost/acphost/internal/waitfor"
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
			cmd, res, err := Profile.Command(context.Background(), bridge.LaunchOptions{Binary: bin, AgentMode: tt.profile, Vendor: Options{Approval: tt.approval}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Source != bridge.FoundOverride || cmd.Path != bin {
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
		got := AdvertisesCompact(&acpclient.InitializeResponse{Meta: []byte(tt.meta)})
		if got != tt.want {
			t.Errorf("%s: got %v", tt.meta, got)
		}
	}
}

// crewCoderScript is a CrewCoder speaking its dialect, written from seed 000.
func crewCoderScript() acptest.Script {
	return acptest.Script{
		Initialize: acptest.InitializeScript{Meta: bridgetest.Raw(`{"crewcoder/sessionCompact":{"method":"session/compact"}}`)},
		NewSession: acptest.NewSessionScript{SessionIDs: []string{"cc_1"},
			Models: bridgetest.Raw(`{"currentModelId":"codex:gpt-5.6-sol","availableModels":[{"modelId":"codex:gpt-5.6-sol","name":"GPT"},{"modelId":"opencode:claude-sonnet-4-6","name":"Sonnet"}]}`)},
		LoadSession: acptest.LoadSessionScript{Sessions: []string{"cc_1"}},
		Methods: map[string]acptest.Reply{
			"session/set_external_directories": {},
			"session/set_reasoning_effort":     {},
			"session/follow_up":                {},
			"session/compact": {Steps: []acptest.Step{
				{Notify: &acptest.Notification{Method: "_crewcoder/compaction_update", Params: bridgetest.Raw(`{"sessionId":"cc_1","status":"started","intent":"manual","message":"Compacting"}`)}},
				{Notify: &acptest.Notification{Method: "_crewcoder/compaction_update", Params: bridgetest.Raw(`{"sessionId":"cc_1","status":"completed","intent":"manual","summary":"We fixed the parser."}`)}},
			}, Result: bridgetest.Raw(`{"summary":"We fixed the parser."}`)},
		},
	}
}

func startCrewCoder(t *testing.T, h *bridge.Host, script acptest.Script, o bridge.LaunchOptions) (*bridge.Bridge, *fakebin.Installed) {
	t.Helper()
	in := fakebin.Install(t, t.TempDir(), "crewcoder", script, "")
	o.Resolver = &bridge.Resolver{Env: []string{"PATH=" + filepath.Dir(in.Path), "HOME=" + t.TempDir()}, NoLoginShell: true}
	b, err := h.StartProfile(bridgetest.Context(t), Profile, o, bridge.Config{ID: "cc"})
	if err != nil {
		t.Fatal(err)
	}
	return b, in
}

func TestCrewCoderHandshakeOrder(t *testing.T) {
	h, rec := bridgetest.NewHost(t, nil)
	b, in := startCrewCoder(t, h, crewCoderScript(), bridge.LaunchOptions{})
	if got := b.Launch().Resolution().Source; got != bridge.FoundPATH {
		t.Errorf("binary found in %q, want PATH", got)
	}
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w", Model: "opencode:claude-sonnet-4-6", Effort: "high", Policy: bridge.Policy{Mode: bridge.ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	rec.WaitFor("session ready", func(ev bridge.Event) bool { return ev.Kind == bridge.KindSession })
	msgs := in.Received(t)
	want := []string{"initialize", "session/new", "session/set_external_directories", "session/set_model", "session/set_reasoning_effort"}
	if got := fakebin.MethodsOf(msgs); !reflect.DeepEqual(got, want) {
		t.Fatalf("handshake %q, want %q", got, want)
	}
	// The complete grant list is sent even when empty, so removed access
	// cannot survive in the native session.
	dirs := fakebin.ParamsOf(t, msgs, "session/set_external_directories")
	if d, ok := dirs["directories"].([]any); !ok || len(d) != 0 || dirs["sessionId"] != s.ID() {
		t.Errorf("set_external_directories params %v", dirs)
	}
	if e := fakebin.ParamsOf(t, msgs, "session/set_reasoning_effort"); e["effort"] != "high" {
		t.Errorf("effort params %v", e)
	}
	if n := fakebin.ParamsOf(t, msgs, "session/new"); len(n["mcpServers"].([]any)) != 0 {
		t.Errorf("session/new params %v", n)
	}
	if got := in.Launches(t); !reflect.DeepEqual(got, [][]string{{"acp", "--approval", "review"}}) {
		t.Errorf("launches %q", got)
	}
}

func TestCrewCoderDirectoryFailureBlocksPrompts(t *testing.T) {
	h, rec := bridgetest.NewHost(t, nil)
	script := crewCoderScript()
	script.Methods["session/set_external_directories"] = acptest.Reply{Error: &acptest.Error{Code: -32602, Message: "directory /nope is not allowed"}}
	b, in := startCrewCoder(t, h, script, bridge.LaunchOptions{})
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w", ExternalDirectories: []string{"/nope"}})
	if err != nil {
		t.Fatal(err)
	}
	rec.WaitFor("unusable error", func(ev bridge.Event) bool {
		return ev.Kind == bridge.KindError && errors.Is(ev.Err, bridge.ErrUnusable)
	})
	if _, err := s.Prompt(bridgetest.Context(t), acpclient.TextBlock("hi")); !errors.Is(err, bridge.ErrUnusable) {
		t.Fatalf("Prompt error %v, want ErrUnusable", err)
	}
	if slices.Contains(fakebin.MethodsOf(in.Received(t)), "session/prompt") {
		t.Fatal("a prompt reached an agent with stale directory grants")
	}
	if d := fakebin.ParamsOf(t, in.Received(t), "session/set_external_directories")["directories"].([]any); len(d) != 1 || d[0] != "/nope" {
		t.Errorf("directories %v", d)
	}
}

func TestCrewCoderVendorData(t *testing.T) {
	h, rec := bridgetest.NewHost(t, nil)
	script := crewCoderScript()
	script.Prompts = []acptest.Turn{{Steps: []acptest.Step{
		bridgetest.Update(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Think","kind":"think","name":"think","status":"pending","_meta":{"crewcoder/tool":{"name":"crewcoder_clarify"}}}`),
		bridgetest.Update(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`),
		bridgetest.Update(`{"sessionUpdate":"usage_update","used":9999,"size":1,"_meta":{"crewcoder/usage":{"lastInputTokens":150000,"contextWindow":200000}}}`),
		{Notify: &acptest.Notification{Method: "_crewcoder/compaction_update", Params: bridgetest.Raw(`{"sessionId":"cc_1","status":"started","automatic":true,"progress":10,"message":"Compacting context"}`)}},
		{Notify: &acptest.Notification{Method: "_crewcoder/compaction_update", Params: bridgetest.Raw(`{"sessionId":"cc_1","status":"completed","automatic":true}`)}},
		// The context-token drop after compaction is not a second compaction.
		bridgetest.Update(`{"sessionUpdate":"usage_update","used":1,"size":1,"_meta":{"crewcoder/usage":{"lastInputTokens":20000,"contextWindow":200000}}}`),
		{Notify: &acptest.Notification{Method: "_crewcoder/compaction_update", Params: bridgetest.Raw(`{"sessionId":"cc_1","status":"skipped","automatic":true}`)}},
	}, Meta: bridgetest.Raw(`{"crewcoder/usage":{"lastInputTokens":21000,"contextWindow":200000}}`), Usage: bridgetest.Raw(`{"totalTokens":5,"inputTokens":3,"outputTokens":2}`)}}
	b, _ := startCrewCoder(t, h, script, bridge.LaunchOptions{})
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(bridgetest.Context(t), acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	rec.WaitFor("turn end", func(ev bridge.Event) bool { return ev.Kind == bridge.KindTurnEnd })
	var got []string
	for _, ev := range rec.Of("cc", s.ID()) {
		switch ev.Kind {
		case bridge.KindToolStart, bridge.KindToolEnd:
			got = append(got, string(ev.Kind)+":"+ev.Tool.Name+":"+ev.Tool.Kind)
		case bridge.KindUsage, bridge.KindCompaction, bridge.KindTurnEnd:
			got = append(got, bridgetest.Describe(ev))
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
	for _, ev := range rec.Of("cc", s.ID()) {
		if ev.Kind == bridge.KindCompaction && ev.Compaction.Status == bridge.CompactionStarted {
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
	h, rec := bridgetest.NewHost(t, nil)
	script := crewCoderScript()
	script.Prompts = []acptest.Turn{{Steps: []acptest.Step{{Text: "Trying"}},
		Error: &acptest.Error{Code: -32603, Message: "Internal error", Data: bridgetest.Raw(`{"message":"codex: usage limit reached, try again at 14:00"}`)}}}
	b, _ := startCrewCoder(t, h, script, bridge.LaunchOptions{})
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Prompt(bridgetest.Context(t), acpclient.TextBlock("go"))
	if err == nil || !strings.HasPrefix(err.Error(), "codex: usage limit reached, try again at 14:00") {
		t.Fatalf("Prompt error %v", err)
	}
	rec.WaitFor("turn end", func(ev bridge.Event) bool { return ev.Kind == bridge.KindTurnEnd })
	got := bridgetest.Kinds(rec.Of("cc", s.ID()), bridge.KindSession, bridge.KindAuthority)
	want := []string{"turn_start:go", "text:Trying", "error", "turn_end:cancelled"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

func TestCrewCoderNativeCompactKeepsSession(t *testing.T) {
	h, rec := bridgetest.NewHost(t, nil)
	b, in := startCrewCoder(t, h, crewCoderScript(), bridge.LaunchOptions{})
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	summary, err := s.Compact(bridgetest.Context(t))
	if err != nil || summary != "We fixed the parser." {
		t.Fatalf("Compact = %q, %v", summary, err)
	}
	rec.WaitFor("meter reset", func(ev bridge.Event) bool { return ev.Kind == bridge.KindUsage })
	if s.ID() != "cc_1" {
		t.Errorf("session id changed to %s", s.ID())
	}
	got := bridgetest.Kinds(rec.Of("cc", "cc_1"), bridge.KindSession, bridge.KindAuthority)
	want := []string{"compaction:started", "compaction:completed", "usage:false:0/0"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q, want %q (no turn_start, one report per update)", got, want)
	}
	for _, ev := range rec.Of("cc", "cc_1") {
		if ev.Kind == bridge.KindCompaction && ev.Compaction.Status == bridge.CompactionCompleted && ev.Compaction.Summary != "We fixed the parser." {
			t.Errorf("completed compaction without the summary: %+v", ev.Compaction)
		}
	}
	methods := fakebin.MethodsOf(in.Received(t))
	if want := []string{"initialize", "session/new", "session/set_external_directories", "session/compact"}; !reflect.DeepEqual(methods, want) {
		t.Errorf("methods %q, want %q", methods, want)
	}
	if len(in.Launches(t)) != 1 {
		t.Errorf("the agent was restarted: %q", in.Launches(t))
	}
}

func TestCrewCoderCompactNeedsAdvertisement(t *testing.T) {
	h, _ := bridgetest.NewHost(t, nil)
	script := crewCoderScript()
	script.Initialize.Meta = nil
	b, in := startCrewCoder(t, h, script, bridge.LaunchOptions{})
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Compact(bridgetest.Context(t)); !errors.Is(err, acpclient.ErrUnsupported) {
		t.Fatalf("Compact error %v, want ErrUnsupported for the app's fallback", err)
	}
	if slices.Contains(fakebin.MethodsOf(in.Received(t)), "session/compact") {
		t.Fatal("session/compact sent without the advertisement")
	}
}

func TestCrewCoderFollowUp(t *testing.T) {
	h, rec := bridgetest.NewHost(t, nil)
	script := crewCoderScript()
	script.Prompts = []acptest.Turn{{Steps: []acptest.Step{{Text: "working"}, {WaitCancel: true}}}}
	b, in := startCrewCoder(t, h, script, bridge.LaunchOptions{})
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if s.SteerMode() != bridge.SteerProvider {
		t.Errorf("SteerMode %q, want %q", s.SteerMode(), bridge.SteerProvider)
	}
	if _, err := s.Steer(bridgetest.Context(t), "too early", ""); !errors.Is(err, bridge.ErrNoTurn) {
		t.Fatalf("Steer without a running turn: %v, want ErrNoTurn", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Prompt(bridgetest.Context(t), acpclient.TextBlock("go"))
		done <- err
	}()
	rec.WaitFor("turn output", func(ev bridge.Event) bool { return ev.Kind == bridge.KindText && ev.Text == "working" })
	if via, err := s.Steer(bridgetest.Context(t), "also update the docs", ""); err != nil || via != bridge.SteerProvider {
		t.Fatalf("Steer: %q, %v; want %q", via, err, bridge.SteerProvider)
	}
	// The exact shape of CrewCoder's source: the text as one string.
	var sent []string
	for _, m := range in.Received(t) {
		if m.Method == "session/follow_up" {
			sent = append(sent, string(m.Params))
		}
	}
	if want := []string{`{"sessionId":"cc_1","message":"also update the docs"}`}; !reflect.DeepEqual(sent, want) {
		t.Errorf("follow_up params %q, want %q", sent, want)
	}
	if _, err := s.Steer(bridgetest.Context(t), "  ", ""); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("an empty follow-up: %v", err)
	}
	s.Cancel()
	if err := waitfor.Recv(t, done, "the call to return"); err != nil {
		t.Fatal(err)
	}
}

func TestCrewCoderRelaunchResumesAndLocksBuild(t *testing.T) {
	h, rec := bridgetest.NewHost(t, nil)
	script := crewCoderScript()
	script.Prompts = []acptest.Turn{{Match: "wait", Steps: []acptest.Step{{Text: "busy"}, {WaitCancel: true}}}}
	b, in := startCrewCoder(t, h, script, bridge.LaunchOptions{})
	store := bridge.NewFileStore(filepath.Join(t.TempDir(), "sessions.json"))
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w", Policy: bridge.Policy{Mode: bridge.ModeAsk}, Store: store, Key: "chat-1"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Policy().Mode != bridge.ModeAsk {
		t.Fatalf("configured default must not lock the mode: %v", s.Policy())
	}

	// Refused while a turn runs: authority never changes underneath it.
	done := make(chan error, 1)
	go func() {
		_, err := s.Prompt(bridgetest.Context(t), acpclient.TextBlock("wait"))
		done <- err
	}()
	rec.WaitFor("busy", func(ev bridge.Event) bool { return ev.Kind == bridge.KindText && ev.Text == "busy" })
	if err := b.Relaunch(bridgetest.Context(t), func(o *bridge.LaunchOptions) { o.AgentMode = "crewcoder" }); !errors.Is(err, bridge.ErrBusy) {
		t.Fatalf("Relaunch during a turn: %v, want ErrBusy", err)
	}
	s.Cancel()
	if err := waitfor.Recv(t, done, "the call to return"); err != nil {
		t.Fatal(err)
	}

	// Always still asks; an escalating policy would be refused in Ask
	// (TestCrewCoderEscalatingRelaunchNeedsFull).
	if err := b.Relaunch(bridgetest.Context(t), func(o *bridge.LaunchOptions) { o.AgentMode = "crewcoder"; o.Vendor = Options{Approval: Always} }); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"acp", "--approval", "review"}, {"acp", "--approval", "always", "--mode", "crewcoder"}}
	if got := in.Launches(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("launches %q, want %q", got, want)
	}
	if got := fakebin.MethodsOf(in.Received(t)); !slices.Contains(got, "session/load") || slices.Contains(got, "session/new") {
		t.Fatalf("the new process got %q; want the same session loaded", got)
	}
	if s.ID() != "cc_1" || b.Session("cc_1") != s {
		t.Fatalf("session id %s after relaunch", s.ID())
	}
	if s.Policy().Mode != bridge.ModeBuild {
		t.Fatalf("a concrete profile must lock Build, got %v", s.Policy())
	}
	s.SetPolicy(bridge.Policy{Mode: bridge.ModeFull})
	if s.Policy().Mode != bridge.ModeBuild {
		t.Fatalf("SetPolicy escaped the lock: %v", s.Policy())
	}
	// The choices survive an app restart with the session.
	if r, ok, err := store.Load("chat-1"); err != nil || !ok || r.NativeSessionID != "cc_1" || r.AgentMode != "crewcoder" || r.ApprovalPolicy != Always || r.Mode != "build" {
		t.Fatalf("stored record %+v, %v, %v", r, ok, err)
	}

	// Back to the configured default: the lock goes, the mode stays Build
	// until the user picks another.
	if err := b.Relaunch(bridgetest.Context(t), func(o *bridge.LaunchOptions) { o.AgentMode = "" }); err != nil {
		t.Fatal(err)
	}
	if s.Policy().Mode != bridge.ModeBuild {
		t.Fatalf("mode after unlocking %v", s.Policy())
	}
	s.SetPolicy(bridge.Policy{Mode: bridge.ModePlan})
	if s.Policy().Mode != bridge.ModePlan {
		t.Fatalf("mode not free after unlocking: %v", s.Policy())
	}
	if _, err := s.Prompt(bridgetest.Context(t), acpclient.TextBlock("hello")); err != nil {
		t.Fatal(err)
	}
	if got := in.Launches(t); len(got) != 3 || slices.Contains(got[2], "--mode") {
		t.Fatalf("launches %q", got)
	}
}

// crewCoderCompactionStep sends a _crewcoder/compaction_update session update,
// the form CrewCoder's source sends.
func crewCoderCompactionStep(fields string) acptest.Step {
	return bridgetest.Update(`{"sessionUpdate":"_crewcoder/compaction_update",` + fields + `}`)
}

func TestCrewCoderCompactionUpdateKind(t *testing.T) {
	h, rec := bridgetest.NewHost(t, nil)
	script := crewCoderScript()
	script.Prompts = []acptest.Turn{{Steps: []acptest.Step{
		bridgetest.Update(`{"sessionUpdate":"usage_update","used":1,"size":1,"_meta":{"crewcoder/usage":{"lastInputTokens":150000,"contextWindow":200000}}}`),
		crewCoderCompactionStep(`"status":"started","phase":"summarizing","automatic":true,"percent":40,"message":"Compacting context"`),
		// Skipped: nothing changed, the meter keeps its value.
		crewCoderCompactionStep(`"status":"completed","phase":"skipped","automatic":true,"message":"Nothing to compact"`),
		// The older notification form still counts.
		{Notify: &acptest.Notification{Method: "_crewcoder/compaction_update", Params: bridgetest.Raw(`{"sessionId":"cc_1","status":"completed","phase":"skipped","automatic":true}`)}},
		// Applied: the meter is unknown (never 0) until the next report.
		crewCoderCompactionStep(`"status":"completed","phase":"applied","automatic":true,"percent":100`),
		bridgetest.Update(`{"sessionUpdate":"usage_update","used":1,"size":1,"_meta":{"crewcoder/usage":{"lastInputTokens":20000,"contextWindow":200000}}}`),
		// A vendor kind that is not CrewCoder's is still passed on.
		bridgetest.Update(`{"sessionUpdate":"_crewcoder/other","x":1}`),
	}}}
	b, _ := startCrewCoder(t, h, script, bridge.LaunchOptions{})
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(bridgetest.Context(t), acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	rec.WaitFor("turn end", func(ev bridge.Event) bool { return ev.Kind == bridge.KindTurnEnd })
	var got []string
	var compactions []*bridge.Compaction
	for _, ev := range rec.Of("cc", s.ID()) {
		switch ev.Kind {
		case bridge.KindUsage, bridge.KindCompaction, bridge.KindExt:
			got = append(got, bridgetest.Describe(ev))
		}
		if ev.Kind == bridge.KindCompaction {
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
	h, rec := bridgetest.NewHost(t, nil)
	script := crewCoderScript()
	script.Methods["session/compact"] = acptest.Reply{Steps: []acptest.Step{
		crewCoderCompactionStep(`"status":"started","automatic":false,"percent":0,"message":"Compacting"`),
		crewCoderCompactionStep(`"status":"completed","phase":"applied","automatic":false,"percent":100,"summary":"We fixed the parser."`),
	}, Result: bridgetest.Raw(`{"summary":"We fixed the parser."}`)}
	b, _ := startCrewCoder(t, h, script, bridge.LaunchOptions{})
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if summary, err := s.Compact(bridgetest.Context(t)); err != nil || summary != "We fixed the parser." {
		t.Fatalf("Compact = %q, %v", summary, err)
	}
	rec.WaitFor("meter reset", func(ev bridge.Event) bool { return ev.Kind == bridge.KindUsage })
	if got, want := bridgetest.Kinds(rec.Of("cc", "cc_1"), bridge.KindSession, bridge.KindAuthority), []string{"compaction:started", "compaction:completed", "usage:false:0/0"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for _, ev := range rec.Of("cc", "cc_1") {
		if ev.Kind == bridge.KindCompaction && ev.Compaction.Status == bridge.CompactionCompleted && (ev.Compaction.Summary != "We fixed the parser." || ev.Compaction.Automatic) {
			t.Errorf("completed compaction %+v", ev.Compaction)
		}
	}
}

// A plain ACP agent has no provider hook: vendor update kinds stay ext.
func TestVendorUpdateKindWithoutProviderIsExt(t *testing.T) {
	h, rec := bridgetest.NewHost(t, nil)
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		bridgetest.Update(`{"sessionUpdate":"_crewcoder/compaction_update","status":"completed","phase":"applied"}`),
	}}}}
	b, err := h.Start(bridgetest.Context(t), bridgetest.AgentConfig(t, "plain", script))
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
	rec.WaitFor("turn end", func(ev bridge.Event) bool { return ev.Kind == bridge.KindTurnEnd })
	if got, want := bridgetest.Kinds(rec.Of("plain", s.ID()), bridge.KindSession, bridge.KindAuthority), []string{"turn_start:go", "ext:", "turn_end:end_turn"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

// The agent profile is CrewCoder's launch-time mode; the host's modes and
// unknown words are not.
func TestAgentProfileIsTheLaunchMode(t *testing.T) {
	for _, m := range AgentProfiles {
		if !Profile.TakesAgentMode(m) {
			t.Errorf("%q not taken at launch", m)
		}
	}
	for _, m := range []string{"", "build", "full", "default"} {
		if Profile.TakesAgentMode(m) {
			t.Errorf("%q taken at launch", m)
		}
	}
	if _, _, err := Profile.Command(context.Background(), bridge.LaunchOptions{Binary: acptest.BuildBinary(t), Vendor: "review"}); !errors.Is(err, bridge.ErrVendorOptions) {
		t.Errorf("a string as Vendor: %v", err)
	}
}
