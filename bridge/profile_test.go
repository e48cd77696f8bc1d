package bridge

import (
	"context"
	"reflect"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/internal/acptest"
)

func TestProfileArgs(t *testing.T) {
	bin := acptest.BuildBinary(t)
	tests := []struct {
		profile string
		opts    LaunchOptions
		want    []string
	}{
		{"claude", LaunchOptions{}, nil},
		{"claude-agent-acp", LaunchOptions{}, nil},
		{"codex", LaunchOptions{}, nil},
		{"gemini", LaunchOptions{}, []string{"--acp"}},
		{"gemini", LaunchOptions{Legacy: true}, []string{"--experimental-acp"}},
		{"opencode", LaunchOptions{}, []string{"acp"}},
		{"qwen", LaunchOptions{}, []string{"--acp"}},
		{"copilot", LaunchOptions{}, []string{"--acp"}},
		{"codey", LaunchOptions{}, []string{"agent", "stdio"}},
		{"codey", LaunchOptions{PermissionMode: "acceptEdits"}, []string{"agent", "--permission-mode", "acceptEdits", "stdio"}},
		{"codey", LaunchOptions{PermissionMode: "auto", AlwaysApprove: true}, []string{"agent", "--permission-mode", "auto", "--always-approve", "stdio"}},
		{"codey", LaunchOptions{PermissionMode: "yolo"}, []string{"agent", "stdio"}},
		{"crewcoder", LaunchOptions{}, []string{"acp", "--approval", "review"}},
		{"kiro", LaunchOptions{Agent: "dev"}, []string{"acp", "--agent", "dev"}},
		{"opencode", LaunchOptions{ExtraArgs: []string{"--print-logs"}}, []string{"acp", "--print-logs"}},
	}
	for _, tt := range tests {
		p, ok := LookupProfile(tt.profile)
		if !ok {
			t.Fatalf("no profile %q", tt.profile)
		}
		tt.opts.Binary = bin
		cmd, _, err := p.Command(context.Background(), tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(cmd.Args, tt.want) {
			t.Errorf("%s %+v: args %q, want %q", tt.profile, tt.opts, cmd.Args, tt.want)
		}
	}
	if _, ok := LookupProfile("nonesuch"); ok {
		t.Error("unknown profile found")
	}
	if len(Profiles()) != 9 {
		t.Errorf("%d profiles", len(Profiles()))
	}
}

func TestLegacyFlagFallback(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	// An older gemini that does not know --acp and exits.
	in := install(t, t.TempDir(), "gemini", acptest.Script{}, `for a in "$@"; do [ "$a" = --acp ] && { echo "Unknown argument: acp" >&2; exit 1; }; done`)
	b, err := h.StartProfile(ctxT(t), GeminiProfile, LaunchOptions{Binary: in.Path}, Config{ID: "g"})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"--acp"}, {"--experimental-acp"}}; !reflect.DeepEqual(in.launches(t), want) {
		t.Fatalf("launches %q, want %q", in.launches(t), want)
	}
	if !b.Launch().Options().Legacy {
		t.Error("the bridge does not remember the legacy flag for restarts")
	}
	if _, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("session", func(ev Event) bool { return ev.Kind == KindSession })
}

func TestCodeyModelsAndPermissionIDs(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	script := acptest.Script{
		Initialize: acptest.InitializeScript{Meta: raw(`{"modelState":{"currentModelId":"codey-opus-5","availableModels":[{"modelId":"codey-opus-5","name":"Opus"},{"modelId":"codey-sonnet-5","name":"Sonnet"}]}}`)},
		Prompts: []acptest.Turn{{Steps: []acptest.Step{
			update(`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"bash: go test","kind":"execute","status":"pending"}`),
			{Permission: &acptest.Permission{ToolCall: raw(`{"toolCallId":"c1"}`), Options: []acptest.PermissionOption{
				{OptionID: "allow-once", Name: "Allow", Kind: "allow_once"},
				{OptionID: "allow-always", Name: "Always allow", Kind: "allow_always"},
				{OptionID: "reject-once", Name: "Reject", Kind: "reject_once"},
			}}},
		}}},
	}
	in := install(t, t.TempDir(), "codey", script, "")
	b, err := h.StartProfile(ctxT(t), CodeyProfile, LaunchOptions{Binary: in.Path}, Config{ID: "codey"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Model: "codey-sonnet-5", Policy: Policy{Mode: ModeFull}})
	if err != nil {
		t.Fatal(err)
	}
	ev := rec.waitFor("ready", func(ev Event) bool { return ev.Kind == KindSession })
	if m := ev.SessionReady.Models; m == nil || m.CurrentModelID != "codey-opus-5" || len(m.AvailableModels) != 2 {
		t.Fatalf("models from initialize._meta.modelState: %+v", m)
	}
	// No model config option: the legacy method selects the model.
	if p := paramsOf(t, in.received(t), "session/set_model"); p["modelId"] != "codey-sonnet-5" {
		t.Errorf("set_model %v", p)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("test")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("allowed once", func(ev Event) bool { return ev.Kind == KindText && ev.Text == "permission: selected allow-once" })
	if want := [][]string{{"agent", "stdio"}}; !reflect.DeepEqual(in.launches(t), want) {
		t.Errorf("launches %q", in.launches(t))
	}
}

func TestModelSelectionPrefersConfigOption(t *testing.T) {
	h, _ := newHostAndRecorder(t, nil)
	script := acptest.Script{NewSession: acptest.NewSessionScript{
		Models:        raw(`{"currentModelId":"a","availableModels":[{"modelId":"a","name":"A"},{"modelId":"b","name":"B"}]}`),
		ConfigOptions: raw(`[{"id":"model","name":"Model","category":"model","type":"select","currentValue":"a","options":[{"value":"a","name":"A"},{"value":"b","name":"B"}]}]`),
	}}
	in := install(t, t.TempDir(), "claude-agent-acp", script, "")
	b, err := h.StartProfile(ctxT(t), ClaudeProfile, LaunchOptions{Binary: in.Path}, Config{ID: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Model: "b"}); err != nil {
		t.Fatal(err)
	}
	msgs := in.received(t)
	if p := paramsOf(t, msgs, "session/set_config_option"); p["configId"] != "model" || p["value"] != "b" {
		t.Errorf("set_config_option %v", p)
	}
	for _, m := range methodsOf(msgs) {
		if m == "session/set_model" {
			t.Error("legacy set_model used although a model option was offered")
		}
	}
}
