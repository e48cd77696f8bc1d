package kiro

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/bridgetest"
)

// specFS is a HostFS of files in memory, standing for the agent's host
// (local or over SFTP): the learner must read through it, not os.
type specFS struct {
	bridge.LocalFS
	files  map[string]string
	broken string // a path whose read fails
}

func (f specFS) ReadFile(_ context.Context, p string) ([]byte, error) {
	if p == f.broken {
		return nil, errors.New("sftp: permission denied")
	}
	if s, ok := f.files[p]; ok {
		return []byte(s), nil
	}
	return nil, fs.ErrNotExist
}

// kiroAgents are the agents a kiro-cli with these specs offers as modes.
var kiroAgents = []acpclient.Mode{{ID: defaultAgent}, {ID: "reviewer"}, {ID: "builder"}, {ID: "runner"}, {ID: "ghost"}, {ID: "broken"}, {ID: "../etc"}}

// kiroSpecs are user- and project-scoped agent specs: the project's
// reviewer (reads only) hides the user's one (trusts everything).
func kiroSpecs(home, cwd string) map[string]string {
	return map[string]string{
		agentSpecPath(home, "reviewer"): `{"name":"reviewer","allowedTools":["*"]}`,
		agentSpecPath(cwd, "reviewer"):  `{"name":"reviewer","tools":["*"],"allowedTools":["read","grep"],"toolsSettings":{"read":{"allowedPaths":["~"]}}}`,
		agentSpecPath(home, "builder"):  `{"name":"builder","allowedTools":["read","write"]}`,
		agentSpecPath(cwd, "runner"):    `{"name":"runner","toolsSettings":{"shell":{"allowedCommands":["make"]}}}`,
		agentSpecPath(home, "broken"):   `{"allowedTools":`,
	}
}

// TestKiroAgentSpecsClassified: each agent kiro-cli offers is classified
// from its spec, read through the host's file system, the workspace's
// spec before the user's: reading only asks, trusting or pre-approving a
// tool that changes things acts unasked, no spec (or one that does not
// parse) is unknown, kiro_default without a spec asks. A spec that cannot
// be read is an error.
func TestKiroAgentSpecsClassified(t *testing.T) {
	home, cwd := "/home/remote", "/srv/work"
	fsys := specFS{files: kiroSpecs(home, cwd)}
	table, err := Profile.Modes.Learn(context.Background(), fsys, home, cwd, kiroAgents)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{defaultAgent, "reviewer"}; !slices.Equal(table.Safe, want) {
		t.Errorf("asking agents %q, want %q", table.Safe, want)
	}
	if want := []string{"builder", "runner"}; !slices.Equal(table.Auto, want) {
		t.Errorf("autonomous agents %q, want %q", table.Auto, want)
	}
	if table.LaunchEscalation == nil {
		t.Error("the learned table lost the launch escalations")
	}
	fsys.broken = agentSpecPath(cwd, "builder")
	if _, err := Profile.Modes.Learn(context.Background(), fsys, home, cwd, kiroAgents); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("Learn with an unreadable spec: %v", err)
	}
}

// TestKiroBuildPrompts: seed 001's flow in host Build: kiro-cli reports
// its agents as modes; in kiro_default, or an agent whose spec asks, the
// session is protected, prompts run and the agent's permission requests
// reach the app, whose answer the agent gets. An agent whose spec trusts
// writes asks the app's consent; one without a spec is reported unknown
// and prompted.
func TestKiroBuildPrompts(t *testing.T) {
	home, cwd := "/home/remote", "/srv/work"
	modes := func(current string) []byte {
		return bridgetest.Raw(`{"currentModeId":"` + current + `","availableModes":[{"id":"kiro_default","name":"kiro_default"},{"id":"reviewer","name":"reviewer"},{"id":"builder","name":"builder"},{"id":"ghost","name":"ghost"}]}`)
	}
	cases := []struct {
		agent   string
		state   bridge.Authority
		consent bool
	}{
		{defaultAgent, bridge.AuthorityProtected, false},
		{"reviewer", bridge.AuthorityProtected, false},
		{"builder", bridge.AuthorityAgentAutonomous, true},
		{"ghost", bridge.AuthorityUnknown, false},
	}
	for _, c := range cases {
		t.Run(c.agent, func(t *testing.T) {
			h, rec := bridgetest.NewHost(t, nil)
			rec.SetPermissionAnswer(func(r *bridge.PermissionRequest) { r.Reject() })
			script := acptest.Script{
				NewSession: acptest.NewSessionScript{SessionIDs: []string{"k1"}, Modes: modes(c.agent)},
				Prompts: []acptest.Turn{{Steps: []acptest.Step{
					{Permission: &acptest.Permission{ToolCall: bridgetest.Raw(`{"toolCallId":"w1","title":"write a.txt"}`)}},
				}}},
			}
			o := bridge.LaunchOptions{FS: specFS{files: kiroSpecs(home, cwd)}, Home: home}
			if c.agent != defaultAgent {
				o.AgentMode = c.agent
			}
			b, _ := startKiro(t, h, script, o, bridge.Config{})
			s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: cwd, Policy: bridge.Policy{Mode: bridge.ModeBuild}})
			if err != nil {
				t.Fatal(err)
			}
			st := s.Authority()
			if st.State != c.state || st.ConsentNeeded != c.consent || st.Blocked != c.consent || st.AgentMode != c.agent {
				t.Fatalf("Authority %+v: want %s, consent needed %v", st, c.state, c.consent)
			}
			if c.consent {
				if _, err := s.Prompt(bridgetest.Context(t), acpclient.TextBlock("go")); !errors.Is(err, bridge.ErrAgentAutonomous) {
					t.Fatalf("Prompt before consent: %v", err)
				}
				s.GrantAutonomy()
			}
			if _, err := s.Prompt(bridgetest.Context(t), acpclient.TextBlock("go")); err != nil {
				t.Fatalf("Prompt in Build: %v", err)
			}
			rec.WaitFor("the permission request shown to the app", func(ev bridge.Event) bool { return ev.Kind == bridge.KindPermission })
			rec.WaitFor("the app's answer reaching the agent", func(ev bridge.Event) bool {
				return ev.Kind == bridge.KindText && strings.Contains(ev.Text, "permission: selected reject")
			})
		})
	}
}
