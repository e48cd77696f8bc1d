package crewcoder

import (
	"errors"
	"reflect"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/bridgetest"
)

func TestLaunchEscalation(t *testing.T) {
	tests := []struct {
		name string
		o    bridge.LaunchOptions
		want string
	}{
		{"default", bridge.LaunchOptions{}, ""},
		{"review", bridge.LaunchOptions{Vendor: Options{Approval: Review}}, ""},
		{"always", bridge.LaunchOptions{Vendor: &Options{Approval: Always}}, ""},
		{"invalid fails closed to review", bridge.LaunchOptions{Vendor: Options{Approval: "yolo"}}, ""},
		{"never", bridge.LaunchOptions{Vendor: Options{Approval: Never}}, "--approval never"},
		{"full access", bridge.LaunchOptions{Vendor: &Options{Approval: FullAccess}}, "--approval full-access"},
		{"sandboxed", bridge.LaunchOptions{Vendor: Options{Approval: Sandboxed}}, "--approval sandboxed"},
		{"extra args", bridge.LaunchOptions{ExtraArgs: []string{"--approval", "full-access"}}, "--approval full-access"},
		{"extra args joined", bridge.LaunchOptions{ExtraArgs: []string{"--approval=never"}}, "--approval never"},
		{"extra args review", bridge.LaunchOptions{Vendor: Options{Approval: Always}, ExtraArgs: []string{"--approval=review"}}, ""},
		{"agent profile is no escalation", bridge.LaunchOptions{AgentMode: "crewcoder"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Profile.Modes.LaunchEscalation(tt.o); got != tt.want {
				t.Errorf("LaunchEscalation = %q, want %q", got, tt.want)
			}
		})
	}
	// The flag reported is the one the launch really passes.
	argv, err := args(bridge.LaunchOptions{Vendor: Options{Approval: FullAccess}})
	if err != nil || argv[1] != "--approval" || argv[2] != FullAccess {
		t.Fatalf("args = %q, %v", argv, err)
	}
}

// Seed 000's approval picker offers Full access as an ordinary choice under
// the Build a concrete profile locks: the app's explicit choice of it in
// the vendor options is its consent, so the relaunch goes through and the
// session is prompted, reported agent-autonomous naming the flag (not
// Build-protected). The same flag in extra arguments asks the app's
// consent, and Ask refuses the relaunch.
func TestCrewCoderFullAccessIsTheAppsChoice(t *testing.T) {
	h, _ := bridgetest.NewHost(t, nil)
	script := crewCoderScript()
	script.Prompts = []acptest.Turn{{Steps: []acptest.Step{{Text: "done"}}}}
	b, in := startCrewCoder(t, h, script, bridge.LaunchOptions{})
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w", Policy: bridge.Policy{Mode: bridge.ModeAsk}})
	if err != nil {
		t.Fatal(err)
	}
	// The state is reported after the session event; wait for it.
	bridgetest.Eventually(t, "protected under review", func() bool { return s.Authority().State == bridge.AuthorityProtected })
	fullAccess := func(o *bridge.LaunchOptions) { o.AgentMode = "crewcoder"; o.Vendor = Options{Approval: FullAccess} }
	if err := b.Relaunch(bridgetest.Context(t), fullAccess); !errors.Is(err, bridge.ErrAgentAutonomous) {
		t.Fatalf("Relaunch to full-access in Ask: %v, want ErrAgentAutonomous", err)
	}
	if got := len(in.Launches(t)); got != 1 {
		t.Fatalf("%d launches; the refused relaunch must not start the agent", got)
	}
	s.SetPolicy(bridge.Policy{Mode: bridge.ModeBuild})
	if err := b.Relaunch(bridgetest.Context(t), fullAccess); err != nil {
		t.Fatalf("Relaunch to full-access in Build: %v", err)
	}
	want := [][]string{{"acp", "--approval", "review"}, {"acp", "--approval", "full-access", "--mode", "crewcoder"}}
	if got := in.Launches(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("launches %q, want %q", got, want)
	}
	bridgetest.Eventually(t, "autonomous by the app's choice", func() bool {
		st := s.Authority()
		return st.State == bridge.AuthorityAgentAutonomous && st.Flag == "--approval full-access" && !st.Blocked && st.HostMode == bridge.ModeBuild
	})
	if _, err := s.Prompt(bridgetest.Context(t), acpclient.TextBlock("go")); err != nil {
		t.Fatalf("Prompt under the chosen full-access: %v", err)
	}

	// The same flag not chosen in the options: the app is asked.
	h2, _ := bridgetest.NewHost(t, nil)
	b2, _ := startCrewCoder(t, h2, script, bridge.LaunchOptions{ExtraArgs: []string{"--approval", "full-access"}})
	s2, err := b2.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w", Policy: bridge.Policy{Mode: bridge.ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	bridgetest.Eventually(t, "consent asked", func() bool { return s2.Authority().ConsentNeeded })
	if _, err := s2.Prompt(bridgetest.Context(t), acpclient.TextBlock("go")); !errors.Is(err, bridge.ErrAgentAutonomous) {
		t.Fatalf("Prompt with an unchosen full-access: %v, want refused until consent", err)
	}
}
