package kiro

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/bridgetest"
	"github.com/acphost/acphost/internal/fakebin"
)

func kiroEffortScript(reply acptest.Reply) acptest.Script {
	return acptest.Script{
		NewSession: acptest.NewSessionScript{SessionIDs: []string{"k1"}},
		Methods:    map[string]acptest.Reply{"_kiro.dev/commands/execute": reply},
	}
}

func TestKiroSetEffortLiveAndAcrossRespawn(t *testing.T) {
	h, _ := bridgetest.NewHost(t, nil)
	cwd := t.TempDir()
	b, in := startKiro(t, h, kiroEffortScript(acptest.Reply{Result: bridgetest.Raw(`{"success":true}`)}), bridge.LaunchOptions{Cwd: cwd, Model: "claude-opus-4.6"}, bridge.Config{})
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetEffort(bridgetest.Context(t), "xhigh"); err != nil {
		t.Fatal(err)
	}
	want := []string{`{"sessionId":"k1","command":{"command":"effort","args":{"level":"xhigh"}}}`}
	if got := fakebin.SentParams(in.Received(t), "_kiro.dev/commands/execute"); !reflect.DeepEqual(got, want) {
		t.Fatalf("sent %q, want %q", got, want)
	}
	overlayHas := func(effort string) bool {
		data, err := os.ReadFile(OverlayPath(cwd))
		return err == nil && strings.Contains(string(data), `"effort": "`+effort+`"`)
	}
	if !overlayHas("xhigh") {
		t.Fatal("the overlay does not hold the new effort")
	}
	// A respawn rewrites the overlay from the launch options: the effort
	// survives it.
	os.Remove(OverlayPath(cwd))
	if err := b.Relaunch(bridgetest.Context(t), func(*bridge.LaunchOptions) {}); err != nil {
		t.Fatal(err)
	}
	if !overlayHas("xhigh") || b.Launch().Options().Effort != "xhigh" {
		t.Fatalf("effort lost across the respawn (launch effort %q)", b.Launch().Options().Effort)
	}
}

func TestKiroSetEffortRefusals(t *testing.T) {
	tests := []struct {
		name, model, level string
		reply              acptest.Reply
		is                 error
		text               string
		pushed             bool
	}{
		{"unknown level", "claude-opus-4.6", "turbo", acptest.Reply{}, bridge.ErrUnknownEffort, "low, medium, high, xhigh, max", false},
		{"model outside the allowlist", "claude-haiku-4.5", "high", acptest.Reply{}, acpclient.ErrUnsupported, "claude-haiku-4.5", false},
		{"deepseek is not allowed", "deepseek-v3", "high", acptest.Reply{}, acpclient.ErrUnsupported, "deepseek-v3", false},
		{"kiro refuses", "gpt-5.2", "high", acptest.Reply{Result: bridgetest.Raw(`{"success":false,"message":"Effort configuration is currently not available"}`)}, nil, "not available", true},
		{"older kiro without the method", "gpt-5.2", "high", acptest.Reply{Error: &acptest.Error{Code: -32601, Message: "Method not found"}}, nil, "Method not found", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := bridgetest.NewHost(t, nil)
			cwd := t.TempDir()
			b, in := startKiro(t, h, kiroEffortScript(tt.reply), bridge.LaunchOptions{Cwd: cwd, Model: tt.model}, bridge.Config{})
			s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: cwd})
			if err != nil {
				t.Fatal(err)
			}
			err = s.SetEffort(bridgetest.Context(t), tt.level)
			if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("SetEffort = %v, want %v mentioning %q", err, tt.is, tt.text)
			}
			if pushed := slices.Contains(fakebin.MethodsOf(in.Received(t)), "_kiro.dev/commands/execute"); pushed != tt.pushed {
				t.Errorf("pushed %v, want %v", pushed, tt.pushed)
			}
		})
	}
}
