package bridge

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/internal/acptest"
)

// sentParams returns the params of every request of method, as sent.
func sentParams(msgs []acptest.Message, method string) []string {
	var out []string
	for _, m := range msgs {
		if m.Method == method {
			out = append(out, string(m.Params))
		}
	}
	return out
}

const thoughtLevelOptions = `[{"id":"model","name":"Model","category":"model","type":"select","currentValue":"m1","options":[{"value":"m1","name":"M1"}]},
	{"id":"reasoning","name":"Reasoning","category":"thought_level","type":"select","currentValue":"medium",
	 "options":[{"group":"fast","name":"Fast","options":[{"value":"low","name":"Low"}]},{"value":"medium","name":"Medium"},{"value":"high","name":"High"}]}]`

func TestSetEffortThroughThoughtLevelOption(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	script := acptest.Script{NewSession: acptest.NewSessionScript{SessionIDs: []string{"s1"}, ConfigOptions: raw(thoughtLevelOptions)}}
	in := install(t, t.TempDir(), "agent", script, "")
	b, err := h.Start(ctxT(t), Config{ID: "a", Transport: &acpclient.CommandTransport{Path: in.Path}})
	if err != nil {
		t.Fatal(err)
	}
	store := NewFileStore(t.TempDir() + "/s.json")
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Store: store, StoreKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetEffort(ctxT(t), "high"); err != nil {
		t.Fatal(err)
	}
	if got, want := sentParams(in.received(t), "session/set_config_option"), []string{`{"sessionId":"s1","configId":"reasoning","value":"high"}`}; !reflect.DeepEqual(got, want) {
		t.Fatalf("sent %q, want %q", got, want)
	}
	if o := thoughtLevelOption(s.ConfigOptions()); o == nil || o.Value != "high" {
		t.Errorf("options after SetEffort %+v", s.ConfigOptions())
	}
	rec.waitFor("config event", func(ev Event) bool { return ev.Kind == KindConfig })
	if r, ok, _ := store.Load("k"); !ok || r.Effort != "high" {
		t.Errorf("stored %+v", r)
	}

	// A level the agent does not offer is refused before anything is sent,
	// naming the levels it does (groups flattened).
	err = s.SetEffort(ctxT(t), "turbo")
	if !errors.Is(err, ErrUnknownEffort) || !strings.Contains(err.Error(), "low, medium, high") {
		t.Fatalf("SetEffort(turbo) = %v", err)
	}
	if n := len(sentParams(in.received(t), "session/set_config_option")); n != 1 {
		t.Errorf("%d set_config_option requests, want 1", n)
	}
}

func TestSetEffortUnsupported(t *testing.T) {
	h, _ := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), agentConfig(t, "plain", acptest.Script{}))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetEffort(ctxT(t), "high"); !errors.Is(err, acpclient.ErrUnsupported) {
		t.Fatalf("SetEffort = %v, want ErrUnsupported", err)
	}
}

func TestSetEffortRefusedDuringTurn(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	script := crewCoderScript()
	script.Prompts = []acptest.Turn{{Steps: []acptest.Step{{Text: "busy"}, {WaitCancel: true}}}}
	b, _ := startCrewCoder(t, h, script, LaunchOptions{})
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Prompt(ctxT(t), acpclient.TextBlock("go"))
		done <- err
	}()
	rec.waitFor("busy", func(ev Event) bool { return ev.Kind == KindText && ev.Text == "busy" })
	if err := s.SetEffort(ctxT(t), "high"); !errors.Is(err, ErrBusy) {
		t.Errorf("SetEffort during a turn = %v, want ErrBusy", err)
	}
	s.Cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestCrewCoderSetEffort(t *testing.T) {
	h, _ := newHostAndRecorder(t, nil)
	b, in := startCrewCoder(t, h, crewCoderScript(), LaunchOptions{})
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetEffort(ctxT(t), "max"); err != nil {
		t.Fatal(err)
	}
	if got, want := sentParams(in.received(t), "session/set_reasoning_effort"), []string{`{"sessionId":"cc_1","effort":"max"}`}; !reflect.DeepEqual(got, want) {
		t.Fatalf("sent %q, want %q", got, want)
	}
}

func kiroEffortScript(reply acptest.Reply) acptest.Script {
	return acptest.Script{
		NewSession: acptest.NewSessionScript{SessionIDs: []string{"k1"}},
		Methods:    map[string]acptest.Reply{"_kiro.dev/commands/execute": reply},
	}
}

func TestKiroSetEffortLiveAndAcrossRespawn(t *testing.T) {
	h, _ := newHostAndRecorder(t, nil)
	cwd := t.TempDir()
	b, in := startKiro(t, h, kiroEffortScript(acptest.Reply{Result: raw(`{"success":true}`)}), LaunchOptions{Cwd: cwd, Model: "claude-opus-4.6"}, Config{})
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetEffort(ctxT(t), "xhigh"); err != nil {
		t.Fatal(err)
	}
	want := []string{`{"sessionId":"k1","command":{"command":"effort","args":{"level":"xhigh"}}}`}
	if got := sentParams(in.received(t), "_kiro.dev/commands/execute"); !reflect.DeepEqual(got, want) {
		t.Fatalf("sent %q, want %q", got, want)
	}
	overlayHas := func(effort string) bool {
		data, err := os.ReadFile(KiroOverlayPath(cwd))
		return err == nil && strings.Contains(string(data), `"effort": "`+effort+`"`)
	}
	if !overlayHas("xhigh") {
		t.Fatal("the overlay does not hold the new effort")
	}
	// A respawn rewrites the overlay from the launch options: the effort
	// survives it.
	os.Remove(KiroOverlayPath(cwd))
	if err := b.Relaunch(ctxT(t), func(*LaunchOptions) {}); err != nil {
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
		{"unknown level", "claude-opus-4.6", "turbo", acptest.Reply{}, ErrUnknownEffort, "low, medium, high, xhigh, max", false},
		{"model outside the allowlist", "claude-haiku-4.5", "high", acptest.Reply{}, acpclient.ErrUnsupported, "claude-haiku-4.5", false},
		{"deepseek is not allowed", "deepseek-v3", "high", acptest.Reply{}, acpclient.ErrUnsupported, "deepseek-v3", false},
		{"kiro refuses", "gpt-5.2", "high", acptest.Reply{Result: raw(`{"success":false,"message":"Effort configuration is currently not available"}`)}, nil, "not available", true},
		{"older kiro without the method", "gpt-5.2", "high", acptest.Reply{Error: &acptest.Error{Code: -32601, Message: "Method not found"}}, nil, "Method not found", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHostAndRecorder(t, nil)
			cwd := t.TempDir()
			b, in := startKiro(t, h, kiroEffortScript(tt.reply), LaunchOptions{Cwd: cwd, Model: tt.model}, Config{})
			s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: cwd})
			if err != nil {
				t.Fatal(err)
			}
			err = s.SetEffort(ctxT(t), tt.level)
			if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("SetEffort = %v, want %v mentioning %q", err, tt.is, tt.text)
			}
			if pushed := slices.Contains(methodsOf(in.received(t)), "_kiro.dev/commands/execute"); pushed != tt.pushed {
				t.Errorf("pushed %v, want %v", pushed, tt.pushed)
			}
		})
	}
}
