package profiles

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"regexp"
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

// findingsOf lists a report's findings as check:status.
func findingsOf(r bridge.DoctorReport) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Check+":"+f.Status)
	}
	return out
}

// TestDoctorSlowIsNotBroken: an agent that answers after the check's
// Timeout is reported slow, with what it answered; one that does not
// answer before GiveUp is slow and timed out; neither is a failure. No
// timing is asserted: a Timeout of a nanosecond makes every probe late.
func TestDoctorSlowIsNotBroken(t *testing.T) {
	info := acptest.InitializeScript{AgentInfo: bridgetest.Raw(`{"name":"gemini-cli","version":"0.9.0"}`)}
	late := fakebin.Install(t, t.TempDir(), "gemini", acptest.Script{Initialize: info}, `[ "$1" = --version ] && { echo "0.9.0"; exit 0; }`)
	r := bridge.Doctor(context.Background(), bridge.DoctorCheck{Profile: Gemini, Options: bridge.LaunchOptions{Binary: late.Path}, Timeout: time.Nanosecond, GiveUp: time.Minute})[0]
	if want := []string{"binary:ok", "version:slow", "acp:slow", "auth:ok"}; !reflect.DeepEqual(findingsOf(r), want) || !r.OK() || !r.Slow() || !r.ACP || r.TimedOut() {
		t.Errorf("a late answer: findings %q, want %q; ok %v, acp %v (%+v)", findingsOf(r), want, r.OK(), r.ACP, r.Findings)
	}
	if !strings.Contains(r.Findings[2].Message, "answers initialize (protocol 1) (slow: ") {
		t.Errorf("the slow handshake's finding: %q", r.Findings[2].Message)
	}

	hung := fakebin.Install(t, t.TempDir(), "gemini", acptest.Script{Initialize: acptest.InitializeScript{Steps: []acptest.Step{{Hang: true}}}}, `[ "$1" = --version ] && { echo "0.9.0"; exit 0; }`)
	r = bridge.Doctor(context.Background(), bridge.DoctorCheck{Profile: Gemini, Options: bridge.LaunchOptions{Binary: hung.Path}, Timeout: time.Nanosecond, GiveUp: 300 * time.Millisecond})[0]
	acp := r.Findings[len(r.Findings)-1]
	if acp.Check != "acp" || acp.Status != bridge.FindingSlow || !acp.TimedOut || !r.OK() || r.ACP {
		t.Errorf("no answer: findings %+v, ok %v", r.Findings, r.OK())
	}
	if len(r.Missing) != 1 || !strings.Contains(r.Missing[0], "did not answer initialize within") {
		t.Errorf("missing %q", r.Missing)
	}
}

// TestDoctorProbesAtOnce: the version probe waits until the agent has
// been started in ACP mode, which happens only if the probes of a check
// run at once; one after the other, the version probe would be given up.
func TestDoctorProbesAtOnce(t *testing.T) {
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	pre := `[ "$1" = --version ] && { while [ ! -e '` + started + `' ]; do sleep 0.05; done; echo "0.9.0"; exit 0; }
touch '` + started + `'`
	in := fakebin.Install(t, filepath.Join(dir, "bin"), "gemini", acptest.Script{}, pre)
	r := bridge.Doctor(context.Background(), bridge.DoctorCheck{Profile: Gemini, Options: bridge.LaunchOptions{Binary: in.Path}, Timeout: time.Minute})[0]
	if want := []string{"binary:ok", "version:ok", "acp:ok", "auth:ok"}; !reflect.DeepEqual(findingsOf(r), want) || r.Version != "0.9.0" {
		t.Errorf("findings %q, want %q; version %q (%+v)", findingsOf(r), want, r.Version, r.Findings)
	}
}

// TestDoctorVersionFromInitialize: an agent whose version flag prints no
// version but whose initialize answer gives one has that version, and no
// warning that it printed none.
func TestDoctorVersionFromInitialize(t *testing.T) {
	in := fakebin.Install(t, t.TempDir(), "claude-agent-acp", acptest.Script{
		Initialize: acptest.InitializeScript{AgentInfo: bridgetest.Raw(`{"name":"@zed-industries/claude-code-acp","version":"0.5.1"}`)},
	}, `[ "$1" = --version ] && exit 0`)
	r := bridge.Doctor(context.Background(), bridge.DoctorCheck{Profile: Claude, Options: bridge.LaunchOptions{Binary: in.Path}})[0]
	if r.Version != "0.5.1" || r.Findings[1].Check != "version" || r.Findings[1].Status != bridge.FindingOK || strings.Contains(r.Findings[1].Message, "printed no version") {
		t.Errorf("version %q, findings %+v", r.Version, r.Findings)
	}
}

// TestDoctorMissingTexts: what is missing reads as English ("a OpenCode"
// did not) and says how to give a program's path.
func TestDoctorMissingTexts(t *testing.T) {
	dir := t.TempDir()
	env := []string{"PATH=" + dir, "HOME=" + dir}
	broken := fakebin.Install(t, dir, "opencode", acptest.Script{}, `echo "no acp here" >&2; exit 2`)
	reports := bridge.Doctor(context.Background(),
		bridge.DoctorCheck{Profile: OpenCode, Options: bridge.LaunchOptions{Env: env, Resolver: &bridge.Resolver{Env: []string{"PATH=/nonexistent", "HOME=" + dir}, NoLoginShell: true, HomebrewPrefixes: []string{}}}},
		bridge.DoctorCheck{Profile: OpenCode, Options: bridge.LaunchOptions{Binary: broken.Path}},
	)
	article := regexp.MustCompile(`\ba [AEIOUaeiou]`)
	for _, r := range reports {
		for _, m := range r.Missing {
			if article.MatchString(m) {
				t.Errorf("missing %q", m)
			}
		}
	}
	if len(reports[0].Missing) != 1 || !strings.Contains(reports[0].Missing[0], "LaunchOptions.Binary") || !strings.Contains(reports[0].Missing[0], "PATH") {
		t.Errorf("a missing program: %q", reports[0].Missing)
	}
	if len(reports[1].Missing) != 1 {
		t.Errorf("a program that does not start: %q", reports[1].Missing)
	}
}
