package schematest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/internal/schematest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestValidMessages(t *testing.T) {
	v := schematest.Load(t)
	client := []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":"a-b","method":"session/new","params":{"cwd":"/w","mcpServers":[{"name":"m","command":"/bin/m","args":[],"env":[]}]}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"},{"type":"resource_link","uri":"file:///w/a","name":"a"}]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"logout"}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`,
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":2}}`,
		`{"jsonrpc":"2.0","id":9,"result":{"outcome":{"outcome":"cancelled"}}}`,
		`{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found","data":{"x":1}}}` + "\n",
		// Methods the schema does not know pass with any params.
		`{"jsonrpc":"2.0","id":4,"method":"session/set_model","params":{"sessionId":"s","modelId":"m"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"_vendor.example/thing","params":[1,2]}`,
		`{"jsonrpc":"2.0","method":"_vendor.example/note"}`,
	}
	for _, line := range client {
		if err := v.ValidateClientMessage([]byte(line)); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
	agent := []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"T","content":[{"type":"diff","path":"/a","oldText":null,"newText":"n"}]}}}`,
		`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[{"optionId":"a","name":"A","kind":"allow_once"}]}}`,
		`{"jsonrpc":"2.0","id":"u-1","method":"fs/read_text_file","params":{"sessionId":"s","path":"/a","line":1,"limit":2}}`,
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"u-1"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
		`{"jsonrpc":"2.0","method":"_crewcoder/compaction_update","params":{"anything":true}}`,
	}
	for _, line := range agent {
		if err := v.ValidateAgentMessage([]byte(line)); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
}

func TestInvalidMessages(t *testing.T) {
	v := schematest.Load(t)
	cases := []struct {
		name  string
		agent bool
		line  string
		want  []string // substrings of the error
	}{
		{"not JSON", false, `{"jsonrpc":"2.0",`, []string{"not a JSON object"}},
		{"no jsonrpc", false, `{"id":1,"method":"initialize","params":{"protocolVersion":1}}`, []string{`"jsonrpc" must be "2.0"`}},
		{"jsonrpc 1.0", true, `{"jsonrpc":"1.0","method":"session/update","params":{}}`, []string{`"jsonrpc" must be "2.0", got "1.0"`}},
		{"missing mcpServers", false, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w"}}`, []string{"session/new", "mcpServers"}},
		{"missing params", false, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, []string{"protocolVersion"}},
		{"wrong update enum", true, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[{"content":"c","priority":"urgent","status":"pending"}]}}}`, []string{"/update/entries/0/priority", "'high'"}},
		{"wrong option kind", true, `{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[{"optionId":"a","name":"A","kind":"maybe"}]}}`, []string{"/options/0/kind"}},
		{"missing text", true, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text"}}}}`, []string{"/update/content", "'text'"}},
		{"wrong direction", true, `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`, []string{"client→agent only"}},
		{"null request id", false, `{"jsonrpc":"2.0","id":null,"method":"session/list","params":{}}`, []string{"null id"}},
		{"fractional id", false, `{"jsonrpc":"2.0","id":1.5,"method":"session/list","params":{}}`, []string{"invalid id"}},
		{"result and error", true, `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, []string{"exactly one"}},
		{"bad error object", true, `{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}`, []string{"error", "code"}},
		{"notification with result", false, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"},"result":{}}`, []string{"must not carry"}},
		{"raw newline", false, "{\"jsonrpc\":\"2.0\",\n\"method\":\"x\"}", []string{"raw newline"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.agent {
				err = v.ValidateAgentMessage([]byte(tc.line))
			} else {
				err = v.ValidateClientMessage([]byte(tc.line))
			}
			if err == nil {
				t.Fatalf("accepted %s", tc.line)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

func TestTrackerChecksResults(t *testing.T) {
	v := schematest.Load(t)
	tr := v.NewTracker()
	steps := []struct {
		fromAgent bool
		line      string
		wantErr   string
	}{
		{false, `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`, ""},
		// The agent's own request may reuse id 1.
		{true, `{"jsonrpc":"2.0","id":1,"method":"fs/write_text_file","params":{"sessionId":"s","path":"/a","content":"x"}}`, ""},
		{false, `{"jsonrpc":"2.0","id":1,"result":{}}`, ""},
		{true, `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"done"}}`, "result of session/prompt: at /stopReason"},
		{false, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`, ""},
		{true, `{"jsonrpc":"2.0","id":2,"result":{}}`, "missing property 'sessionId'"},
		{false, `{"jsonrpc":"2.0","id":3,"method":"session/set_model","params":{}}`, ""},
		{true, `{"jsonrpc":"2.0","id":3,"result":null}`, ""},            // not in the schema: skipped
		{true, `{"jsonrpc":"2.0","id":77,"result":{"whatever":1}}`, ""}, // unknown id: envelope only
		{true, `{"jsonrpc":"2.0","id":"r","method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[]}}`, ""},
		{false, `{"jsonrpc":"2.0","id":"r","result":{"outcome":{"outcome":"maybe"}}}`, "result of session/request_permission"},
	}
	for _, s := range steps {
		var err error
		if s.fromAgent {
			err = tr.AgentLine([]byte(s.line))
		} else {
			err = tr.ClientLine([]byte(s.line))
		}
		switch {
		case s.wantErr == "" && err != nil:
			t.Errorf("%s: %v", s.line, err)
		case s.wantErr != "" && (err == nil || !strings.Contains(err.Error(), s.wantErr)):
			t.Errorf("%s: error %v, want one mentioning %q", s.line, err, s.wantErr)
		}
	}
}

func TestValidateResult(t *testing.T) {
	v := schematest.Load(t)
	if err := v.ValidateResult(schematest.FromClient, "initialize", []byte(`{"protocolVersion":1}`)); err != nil {
		t.Error(err)
	}
	if err := v.ValidateResult(schematest.FromClient, "initialize", []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "protocolVersion") {
		t.Errorf("missing protocolVersion: %v", err)
	}
	if err := v.ValidateResult(schematest.FromAgent, "terminal/create", []byte(`{"terminalId":"t"}`)); err != nil {
		t.Error(err)
	}
	if err := v.ValidateResult(schematest.FromClient, "session/compact", []byte(`null`)); err != nil {
		t.Errorf("unknown method: %v", err)
	}
	methods := strings.Join(v.Methods(schematest.FromAgent), " ")
	if !strings.Contains(methods, "session/request_permission") || strings.Contains(methods, "session/prompt") {
		t.Errorf("agent→client methods: %s", methods)
	}
}

func TestFind(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.json")
	t.Setenv(schematest.EnvSchemaPath, missing)
	if _, err := schematest.Find(); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Find with a missing override = %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"$defs":{}}`), 0o644)
	if _, err := schematest.New(bad); err == nil {
		t.Errorf("New accepted a schema without ACP definitions")
	}
	t.Setenv(schematest.EnvSchemaPath, "")
	if _, err := schematest.Find(); err != nil {
		t.Skipf("workspace schema not found: %v", err)
	}
}

func TestUnstable(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"compaction_update","compactionId":"c","status":"in_progress"}}}`)
	if err := schematest.Load(t).ValidateAgentMessage(line); err == nil {
		t.Errorf("the stable schema accepted an unstable update")
	}
	u := schematest.LoadUnstable(t)
	if err := u.ValidateAgentMessage(line); err != nil {
		t.Errorf("unstable schema: %v", err)
	}
	fork := []byte(`{"jsonrpc":"2.0","id":1,"method":"session/fork","params":{"sessionId":"s","cwd":"/w"}}`)
	if err := u.ValidateClientMessage(fork); err != nil {
		t.Errorf("session/fork: %v", err)
	}
}
