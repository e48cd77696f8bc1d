package profiles

import (
	"context"
	"reflect"
	"testing"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/profiles/codey"
	"github.com/acphost/acphost/bridge/profiles/crewcoder"
	"github.com/acphost/acphost/bridge/profiles/kiro"
	"github.com/acphost/acphost/internal/bridgetest"
	"github.com/acphost/acphost/internal/fakebin"
)

func TestProfileArgs(t *testing.T) {
	bin := acptest.BuildBinary(t)
	tests := []struct {
		profile string
		opts    bridge.LaunchOptions
		want    []string
	}{
		{"claude", bridge.LaunchOptions{}, nil},
		{"claude-agent-acp", bridge.LaunchOptions{}, nil},
		{"codex", bridge.LaunchOptions{}, nil},
		{"gemini", bridge.LaunchOptions{}, []string{"--acp"}},
		{"gemini", bridge.LaunchOptions{Legacy: true}, []string{"--experimental-acp"}},
		{"opencode", bridge.LaunchOptions{}, []string{"acp"}},
		{"qwen", bridge.LaunchOptions{}, []string{"--acp"}},
		{"copilot", bridge.LaunchOptions{}, []string{"--acp"}},
		{"codey", bridge.LaunchOptions{}, []string{"agent", "stdio"}},
		{"codey", bridge.LaunchOptions{Vendor: codey.Options{PermissionMode: "acceptEdits"}}, []string{"agent", "--permission-mode", "acceptEdits", "stdio"}},
		{"codey", bridge.LaunchOptions{Vendor: &codey.Options{PermissionMode: "auto", AlwaysApprove: true}}, []string{"agent", "--permission-mode", "auto", "--always-approve", "stdio"}},
		{"codey", bridge.LaunchOptions{Vendor: codey.Options{PermissionMode: "yolo"}}, []string{"agent", "stdio"}},
		{"crewcoder", bridge.LaunchOptions{}, []string{"acp", "--approval", "review"}},
		{"kiro", bridge.LaunchOptions{AgentMode: "dev"}, []string{"acp", "--agent", "dev"}},
		{"opencode", bridge.LaunchOptions{ExtraArgs: []string{"--print-logs"}}, []string{"acp", "--print-logs"}},
	}
	for _, tt := range tests {
		p, ok := Lookup(tt.profile)
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
	if _, ok := Lookup("nonesuch"); ok {
		t.Error("unknown profile found")
	}
	if len(All()) != 9 {
		t.Errorf("%d profiles", len(All()))
	}
}

func TestLegacyFlagFallback(t *testing.T) {
	h, rec := bridgetest.NewHost(t, nil)
	// An older gemini that does not know --acp and exits.
	in := fakebin.Install(t, t.TempDir(), "gemini", acptest.Script{}, `for a in "$@"; do [ "$a" = --acp ] && { echo "Unknown argument: acp" >&2; exit 1; }; done`)
	b, err := h.StartProfile(bridgetest.Context(t), Gemini, bridge.LaunchOptions{Binary: in.Path}, bridge.Config{ID: "g"})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"--acp"}, {"--experimental-acp"}}; !reflect.DeepEqual(in.Launches(t), want) {
		t.Fatalf("launches %q, want %q", in.Launches(t), want)
	}
	if !b.Launch().Options().Legacy {
		t.Error("the bridge does not remember the legacy flag for restarts")
	}
	if _, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	rec.WaitFor("session", func(ev bridge.Event) bool { return ev.Kind == bridge.KindSession })
}

func TestModelSelectionPrefersConfigOption(t *testing.T) {
	h, _ := bridgetest.NewHost(t, nil)
	script := acptest.Script{NewSession: acptest.NewSessionScript{
		Models:        bridgetest.Raw(`{"currentModelId":"a","availableModels":[{"modelId":"a","name":"A"},{"modelId":"b","name":"B"}]}`),
		ConfigOptions: bridgetest.Raw(`[{"id":"model","name":"Model","category":"model","type":"select","currentValue":"a","options":[{"value":"a","name":"A"},{"value":"b","name":"B"}]}]`),
	}}
	in := fakebin.Install(t, t.TempDir(), "claude-agent-acp", script, "")
	b, err := h.StartProfile(bridgetest.Context(t), Claude, bridge.LaunchOptions{Binary: in.Path}, bridge.Config{ID: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w", Model: "b"}); err != nil {
		t.Fatal(err)
	}
	msgs := in.Received(t)
	if p := fakebin.ParamsOf(t, msgs, "session/set_config_option"); p["configId"] != "model" || p["value"] != "b" {
		t.Errorf("set_config_option %v", p)
	}
	for _, m := range fakebin.MethodsOf(msgs) {
		if m == "session/set_model" {
			t.Error("legacy set_model used although a model option was offered")
		}
	}
}

// The registry finds each vendor package's profile by its aliases too.
func TestLookupVendorProfiles(t *testing.T) {
	if p, ok := Lookup("kiro-cli"); !ok || p != kiro.Profile {
		t.Error("kiro-cli does not name the kiro profile")
	}
	for _, p := range []*bridge.Profile{crewcoder.Profile, kiro.Profile, codey.Profile} {
		if got, ok := Lookup(p.Name); !ok || got != p {
			t.Errorf("Lookup(%q) = %v, %v", p.Name, got, ok)
		}
	}
}
