package bridge

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/acptest"
)

func TestDoctor(t *testing.T) {
	dir := t.TempDir()
	good := install(t, filepath.Join(dir, "good"), "kiro-cli", acptest.Script{
		Initialize: acptest.InitializeScript{
			AgentInfo:   raw(`{"name":"kiro-cli","version":"2.13.0"}`),
			AuthMethods: raw(`[{"id":"kiro-login","name":"Log in"},{"type":"env_var","id":"api-key","name":"Key","vars":[{"name":"KIRO_API_KEY"}]}]`),
		},
	}, `[ "$1" = --version ] && { echo "kiro-cli 2.13.0"; exit 0; }`)
	broken := install(t, filepath.Join(dir, "broken"), "crewcoder", acptest.Script{},
		`[ "$1" = --version ] && { echo "crewcoder v0.9.1-beta"; exit 0; }; echo "unknown command acp" >&2; exit 2`)
	env := []string{"PATH=" + filepath.Join(dir, "good"), "HOME=" + dir}
	reports := Doctor(context.Background(),
		DoctorCheck{Profile: KiroProfile, Options: LaunchOptions{Env: env, Resolver: &Resolver{Env: env, NoLoginShell: true, HomebrewPrefixes: []string{}}}},
		DoctorCheck{Profile: CrewCoderProfile, Options: LaunchOptions{Binary: broken.Path}, Timeout: 5 * time.Second},
		DoctorCheck{Profile: OpenCodeProfile, Options: LaunchOptions{Env: env, Resolver: &Resolver{Env: env, NoLoginShell: true, HomebrewPrefixes: []string{}}}},
	)
	statuses := func(r DoctorReport) []string {
		var out []string
		for _, f := range r.Findings {
			out = append(out, f.Check+":"+f.Status)
		}
		return out
	}

	kiro := reports[0]
	if !kiro.OK() || !kiro.ACP || kiro.Version != "2.13.0" || kiro.Binary.Source != FoundPATH || kiro.Binary.Path != good.Path {
		t.Errorf("kiro report %+v", kiro)
	}
	if want := []string{"binary:ok", "version:ok", "acp:ok", "auth:ok"}; !reflect.DeepEqual(statuses(kiro), want) {
		t.Errorf("kiro findings %q", statuses(kiro))
	}
	if len(kiro.AuthMethods) != 2 || !strings.Contains(kiro.Findings[3].Message, "kiro-login") || !strings.Contains(kiro.Findings[3].Message, "api-key (env_var)") {
		t.Errorf("auth finding %+v", kiro.Findings[3])
	}
	if kiro.Agent == nil || kiro.Agent.Version != "2.13.0" {
		t.Errorf("agent %+v", kiro.Agent)
	}

	crew := reports[1]
	if crew.OK() || crew.ACP || crew.Version != "0.9.1-beta" || crew.Binary.Source != FoundOverride {
		t.Errorf("crewcoder report %+v", crew)
	}
	if want := []string{"binary:ok", "version:ok", "acp:fail"}; !reflect.DeepEqual(statuses(crew), want) {
		t.Errorf("crewcoder findings %q", statuses(crew))
	}
	if !strings.Contains(crew.Findings[2].Message, "acp --approval review") || len(crew.Missing) != 1 {
		t.Errorf("crewcoder acp finding %+v, missing %q", crew.Findings[2], crew.Missing)
	}

	oc := reports[2]
	if oc.OK() || oc.Binary != nil || len(oc.Missing) != 1 || !strings.Contains(oc.Missing[0], "opencode") {
		t.Errorf("opencode report %+v", oc)
	}
	if _, err := json.Marshal(reports); err != nil {
		t.Errorf("reports do not marshal: %v", err)
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
			script: acptest.Script{Initialize: acptest.InitializeScript{Meta: raw(modelState)}},
			shell:  codeyModelsShell, signIn: SignInSignedIn, account: "api.anthropic.com",
			current: "codey-sonnet-5", models: []string{"codey-opus-5", "codey-sonnet-5"},
			findings: []string{"binary:ok", "version:ok", "acp:ok", "auth:ok", "models:ok"}, auth: "signed in as api.anthropic.com (codey models)",
		},
		{
			name:  "models from codey models when initialize has none",
			shell: codeyModelsShell, signIn: SignInSignedIn, account: "api.anthropic.com",
			current: "codey-opus-5", models: []string{"codey-opus-5", "codey-sonnet-5"},
			findings: []string{"binary:ok", "version:ok", "acp:ok", "auth:ok", "models:ok"}, auth: "signed in",
		},
		{
			name:   "no sign-in line: signed out",
			script: acptest.Script{Initialize: acptest.InitializeScript{Meta: raw(modelState)}},
			shell:  `[ "$1" = models ] && { printf '* codey-opus-5\n'; exit 0; }`, signIn: SignInSignedOut,
			current: "codey-sonnet-5", models: []string{"codey-opus-5", "codey-sonnet-5"},
			findings: []string{"binary:ok", "version:warn", "acp:ok", "auth:warn", "models:ok"}, auth: "not signed in",
		},
		{
			name:   "a failing codey models is discarded; the methods decide",
			script: acptest.Script{Initialize: acptest.InitializeScript{AuthMethods: raw(`[{"id":"cached_token","name":"Cached"}]`)}},
			shell:  `[ "$1" = models ] && { printf 'You are logged in as x.\n* codey-opus-5\n'; echo "no network" >&2; exit 3; }`, signIn: SignInUnknown,
			findings: []string{"binary:ok", "version:warn", "acp:ok", "auth:ok", "models:warn"}, auth: "cached_token",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := install(t, t.TempDir(), "codey", tt.script, tt.shell)
			r := Doctor(context.Background(), DoctorCheck{Profile: CodeyProfile, Options: LaunchOptions{Binary: in.Path}})[0]
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

// Without a status command, the initialize answer is all there is.
func TestDoctorSignInFromAuthMethods(t *testing.T) {
	for _, tt := range []struct {
		methods, want string
	}{
		{`[{"id":"login","name":"Log in"}]`, SignInUnknown},
		{``, SignInNotRequired},
	} {
		in := install(t, t.TempDir(), "gemini", acptest.Script{Initialize: acptest.InitializeScript{AuthMethods: raw(tt.methods)}}, "")
		r := Doctor(context.Background(), DoctorCheck{Profile: GeminiProfile, Options: LaunchOptions{Binary: in.Path}})[0]
		if r.SignIn != tt.want || r.Models != nil {
			t.Errorf("methods %s: sign-in %q, models %+v; want %q", tt.methods, r.SignIn, r.Models, tt.want)
		}
	}
}

func TestParseCodeyModels(t *testing.T) {
	st := ParseCodeyModels([]byte("Checking…\nYou are logged in as https://api.x.ai/v1.\n  * m-one (default)\n  - m-two\nnot a bullet\n-nospace\n"))
	if st.SignIn != SignInSignedIn || st.Account != "https://api.x.ai/v1" {
		t.Errorf("sign-in %+v", st)
	}
	if st.Models == nil || st.Models.CurrentModelID != "m-one" || len(st.Models.AvailableModels) != 2 || st.Models.AvailableModels[1].ModelID != "m-two" {
		t.Errorf("models %+v", st.Models)
	}
	if st := ParseCodeyModels([]byte("you are logged in\n")); st.SignIn != SignInSignedIn || st.Account != "" || st.Models != nil {
		t.Errorf("bare sign-in line %+v", st)
	}
	if st := ParseCodeyModels(nil); st.SignIn != SignInSignedOut {
		t.Errorf("empty output %+v", st)
	}
}
