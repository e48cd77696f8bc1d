//go:build interop

package bridge_test

// The authority acceptance run: agents the interop suite was not built
// against (Gemini CLI, Qwen Code, GitHub Copilot CLI, OpenCode), each with
// auto modes of its own, under the same checks as claude-agent-acp and
// codex-acp (testAuthority). .ci/acceptance-agents.sh installs them into
// $ACPHOST_ACCEPTANCE_DIR; without it the run is skipped.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/profiles"
	"github.com/acphost/acphost/internal/peertest"
)

// acceptanceBin returns the installed program of an acceptance agent, or
// skips the test.
func acceptanceBin(t *testing.T, name, bin string) string {
	t.Helper()
	dir := os.Getenv("ACPHOST_ACCEPTANCE_DIR")
	if dir == "" {
		t.Skip("ACPHOST_ACCEPTANCE_DIR is not set (.ci/acceptance-agents.sh installs the agents)")
	}
	path := filepath.Join(dir, name, "node_modules", ".bin", bin)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s is not installed: %v", name, err)
	}
	return path
}

// writeFilePrompt has the fake model call a write tool taking a path and
// the content.
func writeFilePrompt(tool, pathKey, contentKey string) func(string) string {
	return func(file string) string {
		return fmt.Sprintf(`MOCK_TOOL:%s:{"%s":%q,"%s":"hello\n"}`, tool, pathKey, file, contentKey)
	}
}

var geminiAuto = autoAgent{
	profile: profiles.Gemini,
	launch: func(t *testing.T, port int, _ string, started bool) ([]string, []string) {
		argv := []string{acceptanceBin(t, "gemini", "gemini")}
		if started {
			argv = append(argv, "--approval-mode", "yolo")
		}
		// Gemini CLI allows its auto modes only in a trusted folder.
		return argv, peertest.Env(t, "GEMINI_API_KEY=x", fmt.Sprintf("GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:%d", port), "GEMINI_CLI_TRUST_WORKSPACE=true")
	},
	autoMode:  "yolo",
	prompt:    writeFilePrompt("write_file", "file_path", "content"),
	overwrite: true,
}

var qwenAuto = autoAgent{
	profile: profiles.Qwen,
	launch: func(t *testing.T, port int, _ string, started bool) ([]string, []string) {
		argv := []string{acceptanceBin(t, "qwen", "qwen"), "--auth-type=openai"}
		if started {
			argv = append(argv, "--approval-mode", "yolo")
		}
		return argv, peertest.Env(t, "OPENAI_API_KEY=x", fmt.Sprintf("OPENAI_BASE_URL=http://127.0.0.1:%d/v1", port), "OPENAI_MODEL=mock-model")
	},
	autoMode: "yolo",
	prompt:   writeFilePrompt("write_file", "file_path", "content"),
}

var copilotAuto = autoAgent{
	profile: profiles.Copilot,
	launch: func(t *testing.T, port int, _ string, started bool) ([]string, []string) {
		argv := []string{acceptanceBin(t, "copilot", "copilot")}
		if started {
			// Copilot reports allow_all "off" under this flag and acts
			// unasked all the same: the profile's launch escalation.
			argv = append(argv, "--allow-all-tools")
		}
		return argv, peertest.Env(t, "COPILOT_OFFLINE=true", "COPILOT_AUTO_UPDATE=false", "COPILOT_PROVIDER_TYPE=openai",
			fmt.Sprintf("COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:%d/v1", port), "COPILOT_PROVIDER_API_KEY=x", "COPILOT_MODEL=mock-model")
	},
	autoMode: "https://agentclientprotocol.com/protocol/session-modes#autopilot",
	prompt:   writeFilePrompt("create", "path", "file_text"),
}

var openCodeAuto = autoAgent{
	profile: profiles.OpenCode,
	launch: func(t *testing.T, port int, _ string, _ bool) ([]string, []string) {
		// OpenCode starts in its build agent, which acts unasked under
		// the default permissions: started and switched are the same.
		config := fmt.Sprintf(`{"provider":{"mock":{"npm":"@ai-sdk/openai-compatible","name":"mock","options":{"baseURL":"http://127.0.0.1:%d/v1","apiKey":"x"},"models":{"mock-model":{"name":"mock"}}}},"model":"mock/mock-model"}`, port)
		return []string{acceptanceBin(t, "opencode", "opencode")}, peertest.Env(t, "OPENCODE_CONFIG_CONTENT="+config)
	},
	switchTo: func(ctx context.Context, s *bridge.Session) error {
		_, err := s.SetConfigOption(ctx, acpclient.SetConfigOptionRequest{ConfigID: "mode", Value: "build"})
		return err
	},
	prompt: writeFilePrompt("write", "filePath", "content"),
}

func TestInteropAuthorityAcceptance(t *testing.T) {
	for name, agent := range map[string]autoAgent{"gemini": geminiAuto, "qwen": qwenAuto, "copilot": copilotAuto, "opencode": openCodeAuto} {
		t.Run(name, func(t *testing.T) { testAuthority(t, agent) })
	}
}
