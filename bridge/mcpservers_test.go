package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/waitfor"
)

// TestMCPServersTheAgentCannotTake: an http server for an agent that does
// not take http is left out with a notice naming it and the session opens
// with the rest; one marked Required fails the open with an error naming
// it.
func TestMCPServersTheAgentCannotTake(t *testing.T) {
	script := acptest.Script{Initialize: acptest.InitializeScript{AgentCapabilities: raw(`{"mcpCapabilities":{"sse":true}}`)}}
	h, rec := newHostAndRecorder(t, nil)
	cfg, tr := protoConfig("mcp", script)
	b, err := h.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	servers := []acpclient.MCPServer{
		{Name: "files", Command: "/bin/files-mcp"},
		{Type: "http", Name: "web", URL: "https://mcp.example/web"},
		{Type: "sse", Name: "events", URL: "https://mcp.example/sse"},
	}
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w", MCPServers: servers})
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		MCPServers []struct {
			Name string `json:"name"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(receivedParams(t, tr, "session/new"), &sent); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range sent.MCPServers {
		names = append(names, m.Name)
	}
	if strings.Join(names, ",") != "files,events" {
		t.Errorf("session/new sent MCP servers %q, want files,events", names)
	}
	notice := rec.waitFor("the notice naming the server left out", func(ev Event) bool { return ev.Kind == KindNotice && ev.Key == s.Key() })
	if !strings.Contains(notice.Text, `"web"`) || !strings.Contains(notice.Text, "http") {
		t.Errorf("notice %q does not name the server and its transport", notice.Text)
	}

	servers[1].Required = true
	_, err = b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w", MCPServers: servers})
	if err == nil || !errors.Is(err, acpclient.ErrUnsupported) || !strings.Contains(err.Error(), `"web"`) {
		t.Fatalf("OpenSession with a required server the agent cannot take: %v", err)
	}
	if got := len(tr.Agents()[0].Received()); got == 0 {
		t.Fatal("no messages")
	}
	for _, m := range tr.Agents()[0].Received() {
		if m.Method == "session/new" && strings.Contains(string(m.Params), "mcp.example/web") {
			t.Errorf("the required server reached the agent: %s", m.Params)
		}
	}
}
