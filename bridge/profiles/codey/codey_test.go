package codey

import (
	"context"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/bridgetest"
	"github.com/acphost/acphost/internal/fakebin"
)

func TestCodeyModelsAndPermissionIDs(t *testing.T) {
	h, rec := bridgetest.NewHost(t, nil)
	script := acptest.Script{
		Initialize: acptest.InitializeScript{Meta: bridgetest.Raw(`{"modelState":{"currentModelId":"codey-opus-5","availableModels":[{"modelId":"codey-opus-5","name":"Opus"},{"modelId":"codey-sonnet-5","name":"Sonnet"}]}}`)},
		Prompts: []acptest.Turn{{Steps: []acptest.Step{
			bridgetest.Update(`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"bash: go test","kind":"execute","status":"pending"}`),
			{Permission: &acptest.Permission{ToolCall: bridgetest.Raw(`{"toolCallId":"c1"}`), Options: []acptest.PermissionOption{
				{OptionID: "allow-once", Name: "Allow", Kind: "allow_once"},
				{OptionID: "allow-always", Name: "Always allow", Kind: "allow_always"},
				{OptionID: "reject-once", Name: "Reject", Kind: "reject_once"},
			}}},
		}}},
	}
	in := fakebin.Install(t, t.TempDir(), "codey", script, "")
	b, err := h.StartProfile(bridgetest.Context(t), Profile, bridge.LaunchOptions{Binary: in.Path}, bridge.Config{ID: "codey"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w", Model: "codey-sonnet-5", Policy: bridge.Policy{Mode: bridge.ModeFull}})
	if err != nil {
		t.Fatal(err)
	}
	ev := rec.WaitFor("ready", func(ev bridge.Event) bool { return ev.Kind == bridge.KindSession })
	if m := ev.SessionReady.Models; m == nil || m.CurrentModelID != "codey-opus-5" || len(m.AvailableModels) != 2 {
		t.Fatalf("models from initialize._meta.modelState: %+v", m)
	}
	// No model config option: the legacy method selects the model.
	if p := fakebin.ParamsOf(t, in.Received(t), "session/set_model"); p["modelId"] != "codey-sonnet-5" {
		t.Errorf("set_model %v", p)
	}
	if _, err := s.Prompt(bridgetest.Context(t), acpclient.TextBlock("test")); err != nil {
		t.Fatal(err)
	}
	rec.WaitFor("allowed once", func(ev bridge.Event) bool {
		return ev.Kind == bridge.KindText && ev.Text == "permission: selected allow-once"
	})
	if want := [][]string{{"agent", "stdio"}}; !reflect.DeepEqual(in.Launches(t), want) {
		t.Errorf("launches %q", in.Launches(t))
	}
}

// codeyModelsShell answers "codey models" the way seed 002 specifies.
const codeyModelsShell = `[ "$1" = --version ] && { echo "codey 1.4.0"; exit 0; }
[ "$1" = models ] && { printf 'You are logged in as api.anthropic.com.\n* codey-opus-5 (default)\n- codey-sonnet-5\n'; exit 0; }`

func TestDoctorModelsAndSignIn(t *testing.T) {
	modelState := `{"modelState":{"currentModelId":"codey-sonnet-5","availableModels":[{"modelId":"codey-opus-5","name":"Opus"},{"modelId":"codey-sonnet-5","name":"Sonnet"}]}}`
	tests := []struct {
		name     string
		script   acptest.Script
		shell    string
		signIn   string
		account  string
		current  string
		models   []string
		findings []string
		auth     string
	}{
		{
			name:   "models in initialize, signed in per codey models",
			script: acptest.Script{Initialize: acptest.InitializeScript{Meta: bridgetest.Raw(modelState)}},
			shell:  codeyModelsShell, signIn: bridge.SignInSignedIn, account: "api.anthropic.com",
			current: "codey-sonnet-5", models: []string{"codey-opus-5", "codey-sonnet-5"},
			findings: []string{"binary:ok", "version:ok", "acp:ok", "auth:ok", "models:ok"}, auth: "signed in as api.anthropic.com (codey models)",
		},
		{
			name:  "models from codey models when initialize has none",
			shell: codeyModelsShell, signIn: bridge.SignInSignedIn, account: "api.anthropic.com",
			current: "codey-opus-5", models: []string{"codey-opus-5", "codey-sonnet-5"},
			findings: []string{"binary:ok", "version:ok", "acp:ok", "auth:ok", "models:ok"}, auth: "signed in",
		},
		{
			name:   "no sign-in line: signed out",
			script: acptest.Script{Initialize: acptest.InitializeScript{Meta: bridgetest.Raw(modelState)}},
			shell:  `[ "$1" = models ] && { printf '* codey-opus-5\n'; exit 0; }`, signIn: bridge.SignInSignedOut,
			current: "codey-sonnet-5", models: []string{"codey-opus-5", "codey-sonnet-5"},
			// No version printed: the initialize answer's (the fake agent's) stands.
			findings: []string{"binary:ok", "version:ok", "acp:ok", "auth:warn", "models:ok"}, auth: "not signed in",
		},
		{
			name:   "a failing codey models is discarded; the methods decide",
			script: acptest.Script{Initialize: acptest.InitializeScript{AuthMethods: bridgetest.Raw(`[{"id":"cached_token","name":"Cached"}]`)}},
			shell:  `[ "$1" = models ] && { printf 'You are logged in as x.\n* codey-opus-5\n'; echo "no network" >&2; exit 3; }`, signIn: bridge.SignInUnknown,
			findings: []string{"binary:ok", "version:ok", "acp:ok", "auth:ok", "models:warn"}, auth: "cached_token",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := fakebin.Install(t, t.TempDir(), "codey", tt.script, tt.shell)
			r := bridge.Doctor(context.Background(), bridge.DoctorCheck{Profile: Profile, Options: bridge.LaunchOptions{Binary: in.Path}})[0]
			var got []string
			for _, f := range r.Findings {
				got = append(got, f.Check+":"+f.Status)
			}
			if !reflect.DeepEqual(got, tt.findings) {
				t.Fatalf("findings %q, want %q (%+v)", got, tt.findings, r.Findings)
			}
			if r.SignIn != tt.signIn || r.Account != tt.account {
				t.Errorf("sign-in %q %q, want %q %q", r.SignIn, r.Account, tt.signIn, tt.account)
			}
			if !strings.Contains(r.Findings[3].Message, tt.auth) {
				t.Errorf("auth finding %q, want it to mention %q", r.Findings[3].Message, tt.auth)
			}
			var ids []string
			current := ""
			if r.Models != nil {
				current = r.Models.CurrentModelID
				for _, m := range r.Models.AvailableModels {
					ids = append(ids, m.ModelID)
				}
			}
			if current != tt.current || !reflect.DeepEqual(ids, tt.models) {
				t.Errorf("models %q (current %q), want %q (current %q)", ids, current, tt.models, tt.current)
			}
			if tt.findings[4] == "models:warn" && !strings.Contains(r.Findings[4].Message, "no network") {
				t.Errorf("models finding %q does not say why", r.Findings[4].Message)
			}
		})
	}
}

func TestParseCodeyModels(t *testing.T) {
	st := ParseModels([]byte("Checking…\nYou are logged in as https://api.x.ai/v1.\n  * m-one (default)\n  - m-two\nnot a bullet\n-nospace\n"))
	if st.SignIn != bridge.SignInSignedIn || st.Account != "https://api.x.ai/v1" {
		t.Errorf("sign-in %+v", st)
	}
	if st.Models == nil || st.Models.CurrentModelID != "m-one" || len(st.Models.AvailableModels) != 2 || st.Models.AvailableModels[1].ModelID != "m-two" {
		t.Errorf("models %+v", st.Models)
	}
	if st := ParseModels([]byte("you are logged in\n")); st.SignIn != bridge.SignInSignedIn || st.Account != "" || st.Models != nil {
		t.Errorf("bare sign-in line %+v", st)
	}
	if st := ParseModels(nil); st.SignIn != bridge.SignInSignedOut {
		t.Errorf("empty output %+v", st)
	}
}

// TestDoctorHangingStatusCommand: a "codey models" that ignores SIGTERM,
// leaves a child in its group and hangs uses up only its own probe's time:
// the finding names it as timed out, the ACP check still runs and
// succeeds, nothing reads as missing, and neither it nor its child is left
// running.
func TestDoctorHangingStatusCommand(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks the process table through /proc")
	}
	pids := filepath.Join(t.TempDir(), "pids")
	hang := `[ "$1" = --version ] && { echo "codey 1.4.0"; exit 0; }
[ "$1" = models ] && { trap "" TERM; sleep 300 & echo $$ > "` + pids + `.models"; echo $! > "` + pids + `.child"; exec sleep 301; }`
	in := fakebin.Install(t, t.TempDir(), "codey", acptest.Script{}, hang)
	r := bridge.Doctor(context.Background(), bridge.DoctorCheck{Profile: Profile, Options: bridge.LaunchOptions{Binary: in.Path}, Timeout: time.Second, GiveUp: time.Second})[0]
	var got []string
	for _, f := range r.Findings {
		got = append(got, f.Check+":"+f.Status)
	}
	want := []string{"binary:ok", "version:ok", "acp:ok", "auth:ok", "models:slow"}
	if !reflect.DeepEqual(got, want) || !r.ACP || !r.OK() || len(r.Missing) != 0 {
		t.Fatalf("findings %q, want %q; missing %q (%+v)", got, want, r.Missing, r.Findings)
	}
	models := r.Findings[4]
	if !models.TimedOut || !r.TimedOut() || !strings.Contains(models.Message, "codey models timed out") {
		t.Errorf("models finding %+v does not name the status probe as timed out", models)
	}
	fakebin.WaitGone(t, fakebin.PidFrom(t, pids+".models"), "codey models")
	fakebin.WaitGone(t, fakebin.PidFrom(t, pids+".child"), "the child of codey models")
}
