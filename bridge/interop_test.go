//go:build interop

package bridge

// The interop suite runs the bridge against real third-party ACP agents
// (../shared/peers: the TypeScript SDK example agent, claude-agent-acp and
// codex-acp) talking to an offline fake model. Run it with
//
//	go test -tags interop -count=1 -run Interop -v ./bridge/
//
// Package internal/peertest installs the agents and gives each a fresh HOME
// and a minimal environment; the tests skip when node, npm or the peers
// folder is missing.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/internal/peertest"
)

// peerProfile is a plain ACP profile for a real agent started by path (the
// built-in profiles live in bridge/profiles, which imports this package).
func peerProfile(name string) *Profile { return &Profile{Name: name} }

// startPeer starts a real agent through a profile: the program is the
// first word of its peers.env command, the rest are extra arguments.
func startPeer(t *testing.T, h *Host, p *Profile, argv []string, env []string, cwd string, cfg Config) *Bridge {
	t.Helper()
	path := argv[0]
	if !filepath.IsAbs(path) {
		var err error
		if path, err = exec.LookPath(path); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := h.StartProfile(ctx, p, LaunchOptions{Binary: path, ExtraArgs: argv[1:], Env: env, Cwd: cwd}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// These agents do not exit when stdin closes: make Close escalate soon.
	if pt, ok := b.cfg.Transport.(*profileTransport); ok {
		if cmd, ok := pt.inner.(*acpclient.CommandTransport); ok {
			cmd.StopTimeout, cmd.KillTimeout = 300*time.Millisecond, 2*time.Second
		}
	}
	return b
}

func TestInteropSDKExampleAgent(t *testing.T) {
	argv := peertest.Peers(t)["ACP_PEER_SDK_EXAMPLE"]
	if argv == nil {
		t.Fatal("peers.env has no ACP_PEER_SDK_EXAMPLE")
	}
	plain := &Profile{Name: "sdk-example", Binaries: []string{"node"}}
	tests := []struct {
		name     string
		answer   func(*PermissionRequest)
		cancel   bool
		stop     string
		lastText string
	}{
		{"allowed", func(p *PermissionRequest) { p.Allow() }, false, acpclient.StopEndTurn, "successfully updated the configuration"},
		{"rejected", func(p *PermissionRequest) { p.Reject() }, false, acpclient.StopEndTurn, "skip the configuration update"},
		{"cancelled", nil, true, acpclient.StopCancelled, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, rec := newHostAndRecorder(t, nil)
			rec.setPermissionAnswer(tt.answer)
			cwd := t.TempDir()
			b := startPeer(t, h, plain, argv, peertest.Env(t), cwd, Config{ID: "sdk-" + tt.name})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			s, err := b.OpenSession(ctx, SessionConfig{Cwd: cwd, Policy: Policy{Mode: ModeBuild}})
			if err != nil {
				t.Fatal(err)
			}
			if tt.cancel {
				go func() {
					rec.waitFor("first text", func(ev Event) bool { return ev.Kind == KindText })
					s.Cancel()
				}()
			}
			stop, err := s.Prompt(ctx, acpclient.TextBlock("Please improve the project"))
			if err != nil {
				t.Fatal(err)
			}
			if stop != tt.stop {
				t.Fatalf("stop reason %q, want %q; events %s", stop, tt.stop, rec.summary())
			}
			rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Session == s.ID() })
			evs := rec.of(b.ID(), s.ID())
			var text strings.Builder
			tools := map[string]int{}
			var perms int
			for _, ev := range evs {
				switch ev.Kind {
				case KindText:
					text.WriteString(ev.Text)
				case KindToolStart:
					tools[ev.Tool.ID]++
				case KindPermission:
					perms++
				}
			}
			if !strings.Contains(text.String(), tt.lastText) {
				t.Errorf("text %q lacks %q", text.String(), tt.lastText)
			}
			for id, n := range tools {
				if n != 1 {
					t.Errorf("tool %s started %d times", id, n)
				}
			}
			if !tt.cancel && (perms != 1 || len(tools) != 2) {
				t.Errorf("%d permission events, %d tools; events %s", perms, len(tools), rec.summary())
			}
			if tt.cancel {
				for _, ev := range evs {
					if ev.Kind == KindToolEnd && (ev.Tool.Status == "cancelled" || ev.Tool.Status == ToolUnfinished) {
						return
					}
				}
				if len(tools) > 0 {
					t.Errorf("cancelled turn left open tools; events %s", rec.summary())
				}
			}
		})
	}
}

// configOption returns an option of a category, or by id.
func configOption(opts []acpclient.ConfigOption, categoryOrID string) *acpclient.ConfigOption {
	for i := range opts {
		if opts[i].Category == categoryOrID || opts[i].ID == categoryOrID {
			return &opts[i]
		}
	}
	return nil
}

// otherValue returns a selectable value of o other than its current one.
func otherValue(o *acpclient.ConfigOption) string {
	for _, v := range o.Values() {
		if v.Value != o.Value {
			return v.Value
		}
	}
	return ""
}

// exerciseSettings switches mode, model and another config option and
// checks that each change took.
func exerciseSettings(t *testing.T, ctx context.Context, s *Session, ready *SessionReady) {
	t.Helper()
	if ready.AgentModes == nil || len(ready.AgentModes.AvailableModes) < 2 {
		t.Fatalf("no modes offered: %+v", ready.AgentModes)
	}
	var mode string
	for _, m := range ready.AgentModes.AvailableModes {
		if m.ID != ready.AgentModes.CurrentModeID {
			mode = m.ID
			break
		}
	}
	if err := s.SetAgentMode(ctx, mode); err != nil {
		t.Fatalf("SetAgentMode %s: %v", mode, err)
	}
	if err := s.SetAgentMode(ctx, ready.AgentModes.CurrentModeID); err != nil {
		t.Fatalf("SetAgentMode back: %v", err)
	}
	if o := configOption(ready.ConfigOptions, "model"); o != nil {
		if v := otherValue(o); v != "" {
			if err := s.SetModel(ctx, v); err != nil {
				t.Fatalf("SetModel %s: %v", v, err)
			}
		}
	} else if ready.Models != nil && len(ready.Models.AvailableModels) > 1 {
		if err := s.SetModel(ctx, ready.Models.AvailableModels[1].ModelID); err != nil {
			t.Fatalf("SetModel: %v", err)
		}
	} else {
		t.Errorf("no model selection offered")
	}
	for _, o := range ready.ConfigOptions {
		if o.Category == "model" || o.Category == "mode" || o.Type != acpclient.ConfigSelect {
			continue
		}
		v := otherValue(&o)
		if v == "" {
			continue
		}
		opts, err := s.SetConfigOption(ctx, acpclient.SetConfigOptionRequest{ConfigID: o.ID, Value: v})
		if err != nil {
			t.Fatalf("SetConfigOption %s=%s: %v", o.ID, v, err)
		}
		if got := configOption(opts, o.ID); got == nil || got.Value != v {
			t.Fatalf("option %s after setting %s: %+v", o.ID, v, got)
		}
		return
	}
	t.Logf("no further select option to change besides mode and model")
}

// fullTurn prompts the agent into one tool call against the fake model,
// allows the permission request and checks the file it wrote.
func fullTurn(t *testing.T, ctx context.Context, rec *recorder, b *Bridge, s *Session, prompt, file, want string) {
	t.Helper()
	rec.setPermissionAnswer(func(p *PermissionRequest) { p.Allow() })
	stop, err := s.Prompt(ctx, acpclient.TextBlock(prompt))
	if err != nil {
		t.Fatalf("Prompt: %v; events %s", err, rec.summary())
	}
	if stop != acpclient.StopEndTurn {
		t.Fatalf("stop %q; events %s", stop, rec.summary())
	}
	rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Session == s.ID() })
	var perms int
	for _, ev := range rec.of(b.ID(), s.ID()) {
		if ev.Kind == KindPermission {
			perms++
		}
	}
	if perms == 0 {
		t.Errorf("the agent asked no permission; events %s", rec.summary())
	}
	data, err := os.ReadFile(file)
	if err != nil || string(data) != want {
		t.Fatalf("file %s: %q, %v; events %s", file, data, err, rec.summary())
	}
}

func readyOf(t *testing.T, rec *recorder, agent, session string) *SessionReady {
	t.Helper()
	ev := rec.waitFor("session ready", func(ev Event) bool {
		return ev.Kind == KindSession && ev.Bridge == agent && ev.Session == session
	})
	return ev.SessionReady
}

func TestInteropClaudeAgentACP(t *testing.T) {
	argv := peertest.Peers(t)["ACP_PEER_CLAUDE_AGENT_ACP_ZED"]
	if argv == nil {
		t.Fatal("peers.env has no ACP_PEER_CLAUDE_AGENT_ACP_ZED")
	}
	t.Parallel()
	port := peertest.MockModel(t)
	h, rec := newHostAndRecorder(t, nil)
	cwd := t.TempDir()
	env := peertest.Env(t, fmt.Sprintf("ANTHROPIC_BASE_URL=http://127.0.0.1:%d", port), "ANTHROPIC_API_KEY=x", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	b := startPeer(t, h, peerProfile("claude"), argv, env, cwd, Config{ID: "claude"})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	s, err := b.OpenSession(ctx, SessionConfig{Cwd: cwd, Files: peertest.DiskFiles{}, Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	ready := readyOf(t, rec, b.ID(), s.ID())
	exerciseSettings(t, ctx, s, ready)
	file := filepath.Join(cwd, "hello.txt")
	fullTurn(t, ctx, rec, b, s, `MOCK_TOOL:Write:{"file_path":"`+file+`","content":"hello\n"}`, file, "hello\n")
	var diff bool
	for _, ev := range rec.of(b.ID(), s.ID()) {
		if ev.Tool != nil && slices.ContainsFunc(ev.Tool.Content, func(c acpclient.ToolCallContent) bool { return c.Type == "diff" }) {
			diff = true
		}
	}
	if !diff {
		t.Errorf("no diff content reported; events %s", rec.summary())
	}
}

func TestInteropCodexACP(t *testing.T) {
	base := peertest.Peers(t)["ACP_PEER_CODEX_ACP_ZED"]
	if base == nil {
		t.Fatal("peers.env has no ACP_PEER_CODEX_ACP_ZED")
	}
	t.Run("sign-in", func(t *testing.T) {
		t.Parallel()
		// No key in the environment: session/new fails -32000 and the
		// bridge's sign-in flow supplies OPENAI_API_KEY through the env_var
		// method, restarting codex-acp with it.
		h, rec := newHostAndRecorder(t, nil)
		cwd := t.TempDir()
		b := startPeer(t, h, peerProfile("codex"), base, peertest.Env(t), cwd, Config{ID: "codex-auth"})
		go func() {
			ev := rec.waitFor("sign-in", func(ev Event) bool { return ev.Kind == KindAuthRequired })
			for _, m := range ev.Auth.Methods {
				if m.ID == "openai-api-key" && m.Type == AuthTypeEnvVar {
					ev.Auth.Answer(AuthAnswer{MethodID: m.ID, Env: map[string]string{"OPENAI_API_KEY": "x"}})
					return
				}
			}
			t.Errorf("no env_var method openai-api-key in %+v", ev.Auth.Methods)
			ev.Auth.Decline()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		s, err := b.OpenSession(ctx, SessionConfig{Cwd: cwd, Policy: Policy{Mode: ModeBuild}})
		if err != nil {
			t.Fatalf("OpenSession: %v; events %s", err, rec.summary())
		}
		if readyOf(t, rec, b.ID(), s.ID()).AgentModes == nil {
			t.Errorf("no modes after sign-in")
		}
		if !slices.ContainsFunc(rec.snapshot(), func(ev Event) bool { return ev.Kind == KindAuthRequired }) {
			t.Errorf("session/new succeeded without signing in; events %s", rec.summary())
		}
		if n := len(b.Launch().Resolution().Path); n == 0 {
			t.Errorf("no resolution")
		}
	})
	t.Run("turn", func(t *testing.T) {
		t.Parallel()
		port := peertest.MockModel(t)
		h, rec := newHostAndRecorder(t, nil)
		cwd := t.TempDir()
		argv := append(slices.Clone(base), "-c", `model_provider="mock"`, "-c",
			fmt.Sprintf(`model_providers.mock={name="mock",base_url="http://127.0.0.1:%d/v1",wire_api="responses",env_key="OPENAI_API_KEY"}`, port))
		b := startPeer(t, h, peerProfile("codex"), argv, peertest.Env(t, "OPENAI_API_KEY=x"), cwd, Config{ID: "codex"})
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		s, err := b.OpenSession(ctx, SessionConfig{Cwd: cwd, Files: peertest.DiskFiles{}, Policy: Policy{Mode: ModeBuild}})
		if err != nil {
			t.Fatalf("OpenSession: %v; events %s", err, rec.summary())
		}
		ready := readyOf(t, rec, b.ID(), s.ID())
		exerciseSettings(t, ctx, s, ready)
		fullTurn(t, ctx, rec, b, s,
			`MOCK_TOOL:exec_command:{"cmd":"echo hello > hello.txt","sandbox_permissions":"require_escalated","justification":"test"}`,
			filepath.Join(cwd, "hello.txt"), "hello\n")
	})
}
