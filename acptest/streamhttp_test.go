package acptest_test

import (
	"bufio"
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// Over Streamable HTTP, an Exit step ends the agent: its streams end and
// the client reads end of file.
func TestServeHTTPStreamableExit(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	code := 3
	tr := &acptest.Transport{Script: acptest.Script{
		Prompts: []acptest.Turn{{Steps: []acptest.Step{{Text: "bye"}, {Exit: &code}}}},
	}}
	srv := httptest.NewServer(tr)
	defer srv.Close()
	s, err := (&acpclient.HTTPTransport{URL: srv.URL + "/acp"}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := bufio.NewReader(s)
	if got := rawCall(t, s, r, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`); !strings.Contains(got, `"id":0`) {
		t.Fatalf("initialize: %s", got)
	}
	rawCall(t, s, r, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`)
	if got := rawCall(t, s, r, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess_1","prompt":[{"type":"text","text":"go"}]}}`); !strings.Contains(got, "bye") {
		t.Fatalf("turn: %s", got)
	}
	if rest, err := io.ReadAll(r); err != nil {
		t.Fatalf("after the Exit step: %q, %v; want the end of file", rest, err)
	}
	if n := len(tr.Agents()); n != 1 {
		t.Fatalf("%d agents, want 1", n)
	}
}
