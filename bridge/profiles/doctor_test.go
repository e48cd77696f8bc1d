package profiles

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/profiles/crewcoder"
	"github.com/acphost/acphost/bridge/profiles/kiro"
	"github.com/acphost/acphost/internal/bridgetest"
	"github.com/acphost/acphost/internal/fakebin"
)

func TestDoctor(t *testing.T) {
	dir := t.TempDir()
	good := fakebin.Install(t, filepath.Join(dir, "good"), "kiro-cli", acptest.Script{
		Initialize: acptest.InitializeScript{
			AgentInfo:   bridgetest.Raw(`{"name":"kiro-cli","version":"2.13.0"}`),
			AuthMethods: bridgetest.Raw(`[{"id":"kiro-login","name":"Log in"},{"type":"env_var","id":"api-key","name":"Key","vars":[{"name":"KIRO_API_KEY"}]}]`),
		},
	}, `[ "$1" = --version ] && { echo "kiro-cli 2.13.0"; exit 0; }`)
	broken := fakebin.Install(t, filepath.Join(dir, "broken"), "crewcoder", acptest.Script{},
		`[ "$1" = --version ] && { echo "crewcoder v0.9.1-beta"; exit 0; }; echo "unknown command acp" >&2; exit 2`)
	env := []string{"PATH=" + filepath.Join(dir, "good"), "HOME=" + dir}
	reports := bridge.Doctor(context.Background(),
		bridge.DoctorCheck{Profile: kiro.Profile, Options: bridge.LaunchOptions{Env: env, Resolver: &bridge.Resolver{Env: env, NoLoginShell: true, HomebrewPrefixes: []string{}}}},
		bridge.DoctorCheck{Profile: crewcoder.Profile, Options: bridge.LaunchOptions{Binary: broken.Path}, Timeout: 5 * time.Second},
		bridge.DoctorCheck{Profile: OpenCode, Options: bridge.LaunchOptions{Env: env, Resolver: &bridge.Resolver{Env: env, NoLoginShell: true, HomebrewPrefixes: []string{}}}},
	)
	statuses := func(r bridge.DoctorReport) []string {
		var out []string
		for _, f := range r.Findings {
			out = append(out, f.Check+":"+f.Status)
		}
		return out
	}

	kiro := reports[0]
	if !kiro.OK() || !kiro.ACP || kiro.Version != "2.13.0" || kiro.Binary.Source != bridge.FoundPATH || kiro.Binary.Path != good.Path {
		t.Errorf("kiro report %+v", kiro)
	}
	if want := []string{"binary:ok", "version:ok", "acp:ok", "auth:ok"}; !reflect.DeepEqual(statuses(kiro), want) {
		t.Errorf("kiro findings %q", statuses(kiro))
	}
	if len(kiro.AuthMethods) != 2 || !strings.Contains(kiro.Findings[3].Message, "kiro-login") || !strings.Contains(kiro.Findings[3].Message, "api-key (env_var)") {
		t.Errorf("auth finding %+v", kiro.Findings[3])
	}
	if kiro.AgentInfo == nil || kiro.AgentInfo.Version != "2.13.0" {
		t.Errorf("agent %+v", kiro.AgentInfo)
	}

	crew := reports[1]
	if crew.OK() || crew.ACP || crew.Version != "0.9.1-beta" || crew.Binary.Source != bridge.FoundOverride {
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

// Without a status command, the initialize answer is all there is.
func TestDoctorSignInFromAuthMethods(t *testing.T) {
	for _, tt := range []struct {
		methods, want string
	}{
		{`[{"id":"login","name":"Log in"}]`, bridge.SignInUnknown},
		{``, bridge.SignInNotRequired},
	} {
		in := fakebin.Install(t, t.TempDir(), "gemini", acptest.Script{Initialize: acptest.InitializeScript{AuthMethods: bridgetest.Raw(tt.methods)}}, "")
		r := bridge.Doctor(context.Background(), bridge.DoctorCheck{Profile: Gemini, Options: bridge.LaunchOptions{Binary: in.Path}})[0]
		if r.SignIn != tt.want || r.Models != nil {
			t.Errorf("methods %s: sign-in %q, models %+v; want %q", tt.methods, r.SignIn, r.Models, tt.want)
		}
	}
}
