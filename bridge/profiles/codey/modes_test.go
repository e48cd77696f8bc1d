package codey

import (
	"errors"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/bridgetest"
	"github.com/acphost/acphost/internal/fakebin"
)

func TestLaunchEscalation(t *testing.T) {
	tests := []struct {
		name string
		o    bridge.LaunchOptions
		want string
	}{
		{"default", bridge.LaunchOptions{}, ""},
		{"default mode", bridge.LaunchOptions{Vendor: Options{PermissionMode: "default"}}, ""},
		{"unknown mode is default", bridge.LaunchOptions{Vendor: Options{PermissionMode: "bypass"}}, ""},
		{"always approve", bridge.LaunchOptions{Vendor: Options{AlwaysApprove: true}}, "--always-approve"},
		{"auto", bridge.LaunchOptions{Vendor: &Options{PermissionMode: "auto"}}, "--permission-mode auto"},
		{"accept edits", bridge.LaunchOptions{Vendor: Options{PermissionMode: "acceptEdits"}}, "--permission-mode acceptEdits"},
		{"extra always approve", bridge.LaunchOptions{ExtraArgs: []string{"--always-approve"}}, "--always-approve"},
		{"extra auto", bridge.LaunchOptions{ExtraArgs: []string{"--permission-mode", "auto"}}, "--permission-mode auto"},
		{"extra auto joined", bridge.LaunchOptions{ExtraArgs: []string{"--permission-mode=acceptEdits"}}, "--permission-mode acceptEdits"},
		{"extra default", bridge.LaunchOptions{ExtraArgs: []string{"--permission-mode", "default"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Profile.Modes.LaunchEscalation(tt.o); got != tt.want {
				t.Errorf("LaunchEscalation = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestAlwaysApproveIsTheAppsChoice: in host Build, Codey launched with the
// app's explicit always-approve option opens and is prompted, reported
// agent-autonomous naming the flag; the same flag in extra arguments asks
// the app's consent once (GrantAutonomy), and the default asks before
// acting, so the session is protected.
func TestAlwaysApproveIsTheAppsChoice(t *testing.T) {
	cases := []struct {
		name    string
		o       bridge.LaunchOptions
		state   bridge.Authority
		consent bool
	}{
		{"chosen", bridge.LaunchOptions{Vendor: Options{AlwaysApprove: true}}, bridge.AuthorityAgentAutonomous, false},
		{"extra argument", bridge.LaunchOptions{ExtraArgs: []string{"--always-approve"}}, bridge.AuthorityAgentAutonomous, true},
		{"default", bridge.LaunchOptions{}, bridge.AuthorityProtected, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, _ := bridgetest.NewHost(t, nil)
			in := fakebin.Install(t, t.TempDir(), "codey", acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{{Text: "done"}}}}}, "")
			c.o.Binary = in.Path
			b, err := h.StartProfile(bridgetest.Context(t), Profile, c.o, bridge.Config{ID: "codey"})
			if err != nil {
				t.Fatal(err)
			}
			s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w", Policy: bridge.Policy{Mode: bridge.ModeBuild}})
			if err != nil {
				t.Fatalf("OpenSession in Build: %v", err)
			}
			st := s.Authority()
			if st.State != c.state || st.ConsentNeeded != c.consent || st.Blocked != c.consent {
				t.Fatalf("Authority %+v: want %s, consent needed %v", st, c.state, c.consent)
			}
			if c.state == bridge.AuthorityAgentAutonomous && st.Flag != "--always-approve" {
				t.Errorf("Authority %+v does not name the flag", st)
			}
			if c.consent {
				if _, err := s.Prompt(bridgetest.Context(t), acpclient.TextBlock("go")); !errors.Is(err, bridge.ErrAgentAutonomous) {
					t.Fatalf("Prompt before consent: %v", err)
				}
				s.GrantAutonomy()
			}
			if _, err := s.Prompt(bridgetest.Context(t), acpclient.TextBlock("go")); err != nil {
				t.Fatalf("Prompt: %v", err)
			}
		})
	}
}
