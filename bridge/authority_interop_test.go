//go:build interop

package bridge_test

// The authority interop suite: real agents in their own auto-approving
// modes, through the built-in profiles and their mode tables, against the
// offline fake model (internal/peertest). In host Ask, Plan and Build the
// agent must not change the disk through its own tools; in host Full it
// does, and the session says the agent is autonomous.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/profiles"
	"github.com/acphost/acphost/internal/bridgetest"
	"github.com/acphost/acphost/internal/peertest"
)

// autoAgent is a real agent that can be put in an auto-approving mode and
// prompted to write a file with its own tools.
type autoAgent struct {
	profile *bridge.Profile
	// launch returns the command and the environment, starting the agent
	// in its auto mode when started is set.
	launch func(t *testing.T, port int, cwd string, started bool) (argv, env []string)
	// autoMode is the agent mode to switch to; switchTo, when set,
	// switches instead (a config option).
	autoMode string
	switchTo func(ctx context.Context, s *bridge.Session) error
	// prompt has the fake model call the agent's write tool; the file it
	// writes is <cwd>/hello.txt with "hello\n".
	prompt func(file string) string
	// overwrite: the file exists before the turn, with "old\n" (Gemini
	// CLI fails a write_file whose read of a missing file is refused).
	overwrite bool
}

// claudeIn is claude-agent-acp with autoMode as its auto mode; extra is
// added to its environment.
func claudeIn(autoMode string, extra ...string) autoAgent {
	return autoAgent{
		profile: profiles.Claude,
		launch: func(t *testing.T, port int, cwd string, started bool) ([]string, []string) {
			if started {
				// claude-agent-acp starts in the project settings' default mode.
				writeFile(t, filepath.Join(cwd, ".claude", "settings.json"), `{"permissions":{"defaultMode":"`+autoMode+`"}}`)
			}
			return peertest.Command(t, "ACP_PEER_CLAUDE_AGENT_ACP_ZED"), peertest.Env(t, append([]string{
				fmt.Sprintf("ANTHROPIC_BASE_URL=http://127.0.0.1:%d", port), "ANTHROPIC_API_KEY=x", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}, extra...)...)
		},
		autoMode: autoMode,
		prompt: func(file string) string {
			return `MOCK_TOOL:Write:{"file_path":"` + file + `","content":"hello\n"}`
		},
	}
}

var codexAuto = autoAgent{
	profile: profiles.Codex,
	launch: func(t *testing.T, port int, cwd string, started bool) ([]string, []string) {
		argv := append(slices.Clone(peertest.Command(t, "ACP_PEER_CODEX_ACP_ZED")), "-c", `model_provider="mock"`, "-c",
			fmt.Sprintf(`model_providers.mock={name="mock",base_url="http://127.0.0.1:%d/v1",wire_api="responses",env_key="OPENAI_API_KEY"}`, port))
		if started {
			// codex-acp reports these settings as its full-access mode.
			argv = append(argv, "-c", `sandbox_mode="danger-full-access"`, "-c", `approval_policy="never"`)
		}
		return argv, peertest.Env(t, "OPENAI_API_KEY=x")
	},
	autoMode: "full-access",
	// A plain command: in read-only codex runs it in its sandbox, which
	// refuses the write; full-access runs it as it is. (One that asks to
	// escalate is refused outright under full-access's approval "never".)
	prompt: func(string) string { return `MOCK_TOOL:exec_command:{"cmd":"echo hello > hello.txt"}` },
}

func TestInteropAuthorityClaude(t *testing.T) { testAuthority(t, claudeIn("acceptEdits")) }

// bypassPermissions is offered to a root process only with IS_SANDBOX set.
func TestInteropAuthorityClaudeBypass(t *testing.T) {
	testAuthority(t, claudeIn("bypassPermissions", "IS_SANDBOX=1"))
}

func TestInteropAuthorityCodex(t *testing.T) { testAuthority(t, codexAuto) }

// testAuthority runs the agent started in, and switched to, its auto mode
// under every host mode.
func testAuthority(t *testing.T, agent autoAgent) {
	if agent.profile.Modes == nil {
		t.Fatalf("profile %s has no mode table", agent.profile.Name)
	}
	peertest.Peers(t)
	for _, started := range []bool{true, false} {
		for _, mode := range []bridge.Mode{bridge.ModeAsk, bridge.ModePlan, bridge.ModeBuild, bridge.ModeFull} {
			name := fmt.Sprintf("switched/%s", mode)
			if started {
				name = fmt.Sprintf("started/%s", mode)
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				authorityTurn(t, agent, started, mode)
			})
		}
	}
}

func authorityTurn(t *testing.T, agent autoAgent, started bool, mode bridge.Mode) {
	port := peertest.MockModel(t)
	cwd := t.TempDir()
	argv, env := agent.launch(t, port, cwd, started)
	// The host after the temporary dirs: cleanups run last first, so the
	// agent is gone before its HOME and cwd are removed.
	h, rec := bridgetest.NewHost(t, nil)
	// The app declines what it is asked: in Build a write happens only if
	// the agent acts unasked.
	rec.SetPermissionAnswer(func(p *bridge.PermissionRequest) { p.Reject() })
	b := startProfile(t, h, agent.profile, argv, env, cwd)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	full := mode == bridge.ModeFull
	s, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: cwd, Files: peertest.DiskFiles{}, Policy: bridge.Policy{Mode: mode}})
	if !full && errors.Is(err, bridge.ErrAgentAutonomous) {
		t.Logf("OpenSession refused: %v", err)
		return
	}
	if err != nil {
		t.Fatalf("OpenSession: %v; events %s", err, rec.Summary())
	}
	if !started {
		switchAuto(t, ctx, agent, s, mode)
	}
	file, before := filepath.Join(cwd, "hello.txt"), ""
	if agent.overwrite {
		before = "old\n"
		writeFile(t, file, before)
	}
	stop, err := s.Prompt(ctx, acpclient.TextBlock(agent.prompt(file)))
	refused := errors.Is(err, bridge.ErrAgentAutonomous) || errors.Is(err, bridge.ErrAgentModeUnknown)
	if err != nil && (full || !refused) {
		t.Fatalf("Prompt: %v; events %s", err, rec.Summary())
	}
	t.Logf("prompt: stop %q, err %v; authority %+v", stop, err, s.Authority())
	data, rerr := os.ReadFile(file)
	switch {
	case full && (rerr != nil || string(data) != "hello\n"):
		t.Errorf("host Full: file %q, %v; want the agent's write; events %s", data, rerr, rec.Summary())
	case !full && (before == "" && rerr == nil || before != "" && string(data) != before):
		t.Errorf("host %s: the agent wrote %q unasked; events %s", mode, data, rec.Summary())
	}
	checkAuthority(t, rec, b, s, agent.profile.Modes, mode, refused)
}

// switchAuto has the app put the agent in its auto mode, which only host
// Full allows.
func switchAuto(t *testing.T, ctx context.Context, agent autoAgent, s *bridge.Session, mode bridge.Mode) {
	t.Helper()
	var err error
	if agent.switchTo != nil {
		err = agent.switchTo(ctx, s)
	} else {
		err = s.SetAgentMode(ctx, agent.autoMode)
	}
	var refusal *bridge.AuthorityError
	switch {
	case mode == bridge.ModeFull && err != nil:
		t.Fatalf("switching to the auto mode in Full: %v", err)
	case mode != bridge.ModeFull && (!errors.As(err, &refusal) || !errors.Is(err, bridge.ErrAgentAutonomous)):
		t.Fatalf("switching to the auto mode in %s: %v, want an *AuthorityError wrapping ErrAgentAutonomous", mode, err)
	}
}

// checkAuthority checks the state the session reports, in Authority and
// in its last authority event: in host Full agent-autonomous; otherwise
// protected, or, when the prompt was refused, blocked.
func checkAuthority(t *testing.T, rec *bridgetest.Recorder, b *bridge.Bridge, s *bridge.Session, table *bridge.ModeTable, mode bridge.Mode, refused bool) {
	t.Helper()
	want := bridge.AuthorityProtected
	if mode == bridge.ModeFull {
		want = bridge.AuthorityAgentAutonomous
	}
	st := s.Authority()
	switch {
	case refused && (st.State == bridge.AuthorityProtected || !st.Blocked):
		t.Errorf("the prompt was refused but Authority is %+v, want blocked", st)
	case refused:
		want = st.State
	case st.State != want || st.Blocked || st.HostMode != mode:
		t.Errorf("Authority %+v, want %s in %s, not blocked", st, want, mode)
	case want == bridge.AuthorityProtected && st.AgentMode != "" && st.AgentMode != table.Asking && st.AgentMode != table.Plan:
		t.Errorf("agent mode %q, want its asking (%q) or plan (%q) mode", st.AgentMode, table.Asking, table.Plan)
	}
	// Events arrive asynchronously: wait for the one reporting this state.
	rec.WaitFor("authority event "+string(want), func(ev bridge.Event) bool {
		return ev.Kind == bridge.KindAuthority && ev.Bridge == b.ID() && ev.Session == s.ID() && ev.Authority.State == want
	})
}

// startProfile starts a real agent through a built-in profile: the program
// is the first word of its command, the rest are extra arguments.
func startProfile(t *testing.T, h *bridge.Host, p *bridge.Profile, argv, env []string, cwd string) *bridge.Bridge {
	t.Helper()
	path, err := exec.LookPath(argv[0])
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := h.StartProfile(ctx, p, bridge.LaunchOptions{Binary: path, ExtraArgs: argv[1:], Env: env, Cwd: cwd}, bridge.Config{ID: p.Name})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
