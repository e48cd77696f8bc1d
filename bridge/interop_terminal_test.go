//go:build interop

package bridge

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/internal/peertest"
)

// TestInteropClaudeBashOutput runs claude-agent-acp's Bash tool against the
// fake model, with terminals offered and the terminal output extension
// declared (Config.AgentTerminalOutput). claude-agent-acp 0.23 runs the
// command itself, never through terminal/create, and reports it in the
// tool call's _meta (terminal_info, then terminal_output with the whole
// output, then terminal_exit): the output arrives as terminal events of the
// Bash row, and a view shows it there with the exit status.
func TestInteropClaudeBashOutput(t *testing.T) {
	argv := peertest.Peers(t)["ACP_PEER_CLAUDE_AGENT_ACP_ZED"]
	if argv == nil {
		t.Fatal("peers.env has no ACP_PEER_CLAUDE_AGENT_ACP_ZED")
	}
	t.Parallel()
	port := peertest.MockModel(t)
	h, rec := newHostAndRecorder(t, nil)
	cwd := t.TempDir()
	env := peertest.Env(t, fmt.Sprintf("ANTHROPIC_BASE_URL=http://127.0.0.1:%d", port), "ANTHROPIC_API_KEY=x", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	b := startPeer(t, h, peerProfile("claude"), argv, env, cwd, Config{ID: "claude-bash", AgentTerminalOutput: true, Terminals: &terminal.Options{}})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	s, err := b.OpenSession(ctx, SessionConfig{Cwd: cwd, Files: peertest.DiskFiles{}, Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	rec.setPermissionAnswer(func(p *PermissionRequest) { p.Allow() })
	stop, err := s.Prompt(ctx, acpclient.TextBlock(`MOCK_TOOL:Bash:{"command":"echo one; sleep 0.3; echo two"}`))
	if err != nil || stop != acpclient.StopEndTurn {
		t.Fatalf("Prompt: %q, %v; events %s", stop, err, rec.summary())
	}
	rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Session == s.ID() })
	var v SessionView
	var bash string
	var output strings.Builder
	var exit *acpclient.TerminalExitStatus
	for _, ev := range rec.of(b.ID(), s.ID()) {
		v.Apply(ev)
		switch {
		case ev.Kind == KindToolStart && ev.Tool != nil && ev.Tool.Kind == "execute":
			bash = ev.Tool.ID
		case ev.Kind == KindTerminal:
			tr := ev.Terminal
			if tr.Source != "meta" || tr.ToolCallID == "" || tr.ToolCallID != bash {
				t.Errorf("terminal event %+v, want source meta in the Bash row %q", tr, bash)
			}
			if tr.Reset {
				output.Reset()
			}
			output.WriteString(tr.Data)
			if tr.Exit != nil {
				exit = tr.Exit
			}
		case ev.Kind == KindText && strings.HasPrefix(ev.Text, "request terminal/"):
			t.Errorf("unexpected terminal request report %q", ev.Text)
		}
	}
	if bash == "" {
		t.Fatalf("no execute tool call; events %s", rec.summary())
	}
	if got := output.String(); got != "one\ntwo\n" && got != "one\ntwo" {
		t.Errorf("terminal events carried %q, want the command's output; events %s", got, rec.summary())
	}
	if exit == nil || exit.ExitCode == nil || *exit.ExitCode != 0 {
		t.Errorf("exit %+v, want code 0", exit)
	}
	i := v.findRow(bash, 0, true)
	if i < 0 || !strings.HasPrefix(v.Tools[i].Output, "one\ntwo") || v.Tools[i].Exit == nil {
		t.Errorf("the view's Bash row: %+v", v.Tools)
	}
}
