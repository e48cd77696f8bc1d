package acpclient_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"sync"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// printer is a minimal Client: it collects the agent's text and allows
// every permission request once.
type printer struct {
	mu   sync.Mutex
	text strings.Builder
}

func (p *printer) SessionUpdate(_ context.Context, n *acpclient.SessionNotification) {
	if chunk, ok := n.Update.(*acpclient.AgentMessageChunk); ok {
		p.mu.Lock()
		p.text.WriteString(chunk.Content.Text)
		p.mu.Unlock()
	}
}

func (p *printer) RequestPermission(_ context.Context, req *acpclient.RequestPermissionRequest, reply func(*acpclient.RequestPermissionResponse, error)) {
	for _, o := range req.Options {
		if o.Kind == acpclient.PermissionAllowOnce {
			reply(acpclient.PermissionSelected(o.OptionID), nil)
			return
		}
	}
	reply(acpclient.PermissionCancelled(), nil)
}

// Example_conn runs one turn against an agent. Here the agent is the
// in-process fake of package acptest; for a real agent use
// acpclient.Command("claude-agent-acp") (or any ACP agent) as the transport.
func Example_conn() {
	ctx := context.Background()
	agent := &acptest.Transport{Script: acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Text: "Hello "}, {Text: "from the agent."},
	}}}}}

	client := &printer{}
	conn, err := acpclient.Connect(ctx, agent, client, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Initialize(ctx, &acpclient.InitializeRequest{
		ClientInfo: &acpclient.Implementation{Name: "example", Version: "1.0"},
	}); err != nil {
		log.Fatal(err)
	}
	session, err := conn.NewSession(ctx, &acpclient.NewSessionRequest{Cwd: "/tmp"})
	if err != nil {
		log.Fatal(err)
	}
	resp, err := conn.Prompt(ctx, &acpclient.PromptRequest{
		SessionID: session.SessionID,
		Prompt:    []acpclient.ContentBlock{acpclient.TextBlock("Say hello")},
	})
	if err != nil {
		log.Fatal(err)
	}
	// Every update sent before the answer has been delivered by now.
	fmt.Println(client.text.String())
	fmt.Println(resp.StopReason)
	// Output:
	// Hello from the agent.
	// end_turn
}

// ExampleCommand starts an agent as a child process. Closing the Conn ends
// the agent and everything it started.
func ExampleCommand() {
	transport := acpclient.Command("definitely-not-an-installed-agent", "acp")
	_, err := acpclient.Connect(context.Background(), transport, &printer{}, nil)
	fmt.Println(err != nil && strings.Contains(err.Error(), "not in PATH"))
	// Output: true
}

// ExampleCommandTransport configures how an agent process is run and
// stopped: its directory and environment, and how long Close waits before
// it signals the process and then kills it. A host that reruns the program
// (a terminal sign-in) asks the transport which program it is.
func ExampleCommandTransport() {
	transport := &acpclient.CommandTransport{
		Path:        "gemini",
		Args:        []string{"--acp"},
		Dir:         "/home/me/project",
		Env:         []string{"PATH=/usr/bin", "GEMINI_API_KEY=…"},
		StopTimeout: 2 * time.Second,
	}
	var t acpclient.Transport = transport
	if p, ok := t.(acpclient.ProgramTransport); ok {
		path, args, _ := p.Program()
		fmt.Println(path, args)
	}
	// Output: gemini [--acp]
}
