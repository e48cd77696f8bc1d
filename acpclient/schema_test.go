package acpclient

import (
	"context"
	"fmt"
	"testing"

	"github.com/acphost/acphost/internal/schematest"
	"github.com/acphost/acphost/internal/waitfor"
)

// fullClient implements every optional client interface with canned answers.
type fullClient struct{ *recorder }

func (fullClient) ReadTextFile(context.Context, *ReadTextFileRequest) (*ReadTextFileResponse, error) {
	return &ReadTextFileResponse{Content: "x"}, nil
}
func (fullClient) WriteTextFile(context.Context, *WriteTextFileRequest) error { return nil }
func (fullClient) CreateTerminal(context.Context, *CreateTerminalRequest) (*CreateTerminalResponse, error) {
	return &CreateTerminalResponse{TerminalID: "term-1"}, nil
}
func (fullClient) TerminalOutput(context.Context, *TerminalRequest) (*TerminalOutputResponse, error) {
	code := 0
	return &TerminalOutputResponse{Output: "ok\n", ExitStatus: &TerminalExitStatus{ExitCode: &code}}, nil
}
func (fullClient) WaitForTerminalExit(_ context.Context, _ *TerminalRequest, reply func(*TerminalExitStatus, error)) {
	sig := "SIGTERM"
	go reply(&TerminalExitStatus{Signal: &sig}, nil)
}
func (fullClient) KillTerminal(context.Context, *TerminalRequest) error    { return nil }
func (fullClient) ReleaseTerminal(context.Context, *TerminalRequest) error { return nil }
func (fullClient) ElicitationModes() []string                              { return []string{"form", "url"} }
func (fullClient) CreateElicitation(_ context.Context, _ *CreateElicitationRequest, reply func(*CreateElicitationResponse, error)) {
	reply(&CreateElicitationResponse{Action: "accept", Content: map[string]any{"name": "x"}}, nil)
}
func (fullClient) CompleteElicitation(context.Context, *CompleteElicitationNotification) {}

// TestClientMessagesMatchSchema sends every client→agent message and every
// answer to agent→client requests, and checks each line against the
// official ACP schema (the peer validates as it reads).
func TestClientMessagesMatchSchema(t *testing.T) {
	schematest.Load(t) // skips, saying why, when the schema is absent
	c, p := newPair(t, fullClient{newRecorder()}, nil)
	ctx := context.Background()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Initialize(ctx, &InitializeRequest{
			ClientInfo:         &Implementation{Name: "acphost-test", Version: "0.1"},
			ClientCapabilities: ClientCapabilities{Auth: &AuthCapabilities{Terminal: true}, Session: &ClientSessionCapabilities{ConfigOptions: &ConfigOptionsCapabilities{Boolean: &Marker{}}}},
		})
		errc <- err
	}()
	m := p.recv()
	p.sendf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"audio":true,"embeddedContext":true},"mcpCapabilities":{"http":true,"sse":true},"sessionCapabilities":{"list":{},"delete":{},"resume":{},"close":{},"additionalDirectories":{}},"auth":{"logout":{}}},"authMethods":[{"id":"a","name":"A"}]}}`, m.ID)
	if err := waitfor.Recv(t, errc, "the call to return its error"); err != nil {
		t.Fatal(err)
	}
	size := int64(3)
	on := false
	servers := []MCPServer{{Name: "stdio", Command: "/bin/mcp"}, {Type: "http", Name: "h", URL: "http://127.0.0.1:1", Headers: []EnvVariable{{Name: "A", Value: "b"}}}}
	calls := []struct {
		name   string
		call   func() error
		result string
	}{
		{"authenticate", func() error { return c.Authenticate(ctx, &AuthenticateRequest{MethodID: "a"}) }, `{}`},
		{"new", func() error {
			_, err := c.NewSession(ctx, &NewSessionRequest{Cwd: "/w", MCPServers: servers, AdditionalDirectories: []string{"/x"}})
			return err
		}, `{"sessionId":"s"}`},
		{"load", func() error {
			_, err := c.LoadSession(ctx, &LoadSessionRequest{SessionID: "s", Cwd: "/w"})
			return err
		}, `{}`},
		{"resume", func() error {
			_, err := c.ResumeSession(ctx, &ResumeSessionRequest{SessionID: "s", Cwd: "/w"})
			return err
		}, `{}`},
		{"list", func() error { _, err := c.ListSessions(ctx, &ListSessionsRequest{Cwd: "/w", Cursor: "c"}); return err }, `{"sessions":[{"sessionId":"s","cwd":"/w"}]}`},
		{"delete", func() error { return c.DeleteSession(ctx, "s") }, `{}`},
		{"close", func() error { return c.CloseSession(ctx, "s") }, `{}`},
		{"prompt", func() error {
			_, err := c.Prompt(ctx, &PromptRequest{SessionID: "s", Prompt: []ContentBlock{
				TextBlock("hello"), ImageBlock("aGk=", "image/png"), {Type: ContentAudio, Data: "aGk=", MimeType: "audio/wav"},
				{Type: ContentResourceLink, URI: "file:///w/a.go", Name: "a.go", Size: &size},
				TextResourceBlock("file:///w/b.go", "text/x-go", "package b"),
			}})
			return err
		}, `{"stopReason":"end_turn"}`},
		{"set_mode", func() error { return c.SetMode(ctx, &SetModeRequest{SessionID: "s", ModeID: "code"}) }, `{}`},
		{"set_config select", func() error {
			_, err := c.SetConfigOption(ctx, &SetConfigOptionRequest{SessionID: "s", ConfigID: "model", Value: "m"})
			return err
		}, `{"configOptions":[]}`},
		{"set_config bool", func() error {
			_, err := c.SetConfigOption(ctx, &SetConfigOptionRequest{SessionID: "s", ConfigID: "fast", Bool: &on})
			return err
		}, `{"configOptions":[]}`},
		{"logout", func() error { return c.Logout(ctx) }, `{}`},
	}
	for _, call := range calls {
		go func() { errc <- call.call() }()
		m := p.recv()
		p.sendf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, call.result)
		if err := waitfor.Recv(t, errc, "the call to return its error"); err != nil {
			t.Fatalf("%s: %v", call.name, err)
		}
	}
	go c.Cancel(ctx, "s")
	if m := p.recv(); m.Method != "session/cancel" {
		t.Fatalf("got %s", m.line)
	}

	// Answers to the agent's requests.
	rec := c.client.(fullClient).recorder
	requests := []string{
		`{"jsonrpc":"2.0","id":101,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[{"optionId":"ok","name":"OK","kind":"allow_once"}]}}`,
		`{"jsonrpc":"2.0","id":102,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[]}}`,
		`{"jsonrpc":"2.0","id":103,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/w/a","line":1,"limit":2}}`,
		`{"jsonrpc":"2.0","id":104,"method":"fs/write_text_file","params":{"sessionId":"s","path":"/w/a","content":"x"}}`,
		`{"jsonrpc":"2.0","id":105,"method":"terminal/create","params":{"sessionId":"s","command":"ls"}}`,
		`{"jsonrpc":"2.0","id":106,"method":"terminal/output","params":{"sessionId":"s","terminalId":"term-1"}}`,
		`{"jsonrpc":"2.0","id":107,"method":"terminal/wait_for_exit","params":{"sessionId":"s","terminalId":"term-1"}}`,
		`{"jsonrpc":"2.0","id":108,"method":"terminal/kill","params":{"sessionId":"s","terminalId":"term-1"}}`,
		`{"jsonrpc":"2.0","id":109,"method":"terminal/release","params":{"sessionId":"s","terminalId":"term-1"}}`,
		`{"jsonrpc":"2.0","id":110,"method":"elicitation/create","params":{"sessionId":"s","message":"Name?","mode":"form","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}`,
		`{"jsonrpc":"2.0","id":111,"method":"no/such/method","params":{}}`,
	}
	for i, req := range requests {
		p.send(req)
		switch i {
		case 0:
			go (<-rec.perms).reply(PermissionSelected("ok"), nil)
		case 1:
			go (<-rec.perms).reply(PermissionCancelled(), nil)
		}
		m := p.recv()
		if string(m.ID) != fmt.Sprint(101+i) {
			t.Fatalf("answer %s for request %d", m.line, 101+i)
		}
		if i < len(requests)-1 && m.Error != nil {
			t.Errorf("request %d answered with error %v", 101+i, m.Error)
		}
	}
}
