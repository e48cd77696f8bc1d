package acpclient_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"sync"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// textCollector takes the agent's streamed text as TextDeltas and every
// other update as a notification.
type textCollector struct {
	printer // SessionUpdate and RequestPermission, for everything else
	mu      sync.Mutex
	deltas  strings.Builder
}

func (c *textCollector) TextDeltas(_ context.Context, ds []acpclient.TextDelta) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range ds {
		if d.Kind == acpclient.UpdateAgentMessageChunk {
			c.deltas.WriteString(d.Text)
		}
	}
}

// ExampleTextDeltaHandler collects a turn's text from lean deltas: the
// Conn decodes each plain text chunk into a TextDelta and reuses its
// entry, where a notification would cost half a kilobyte per chunk.
func ExampleTextDeltaHandler() {
	ctx := context.Background()
	agent := &acptest.Transport{Script: acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Text: "Streamed "}, {Text: "lean."},
	}}}}}
	client := &textCollector{}
	conn, err := acpclient.Connect(ctx, agent, client, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Initialize(ctx, &acpclient.InitializeRequest{}); err != nil {
		log.Fatal(err)
	}
	session, err := conn.NewSession(ctx, &acpclient.NewSessionRequest{Cwd: "/tmp"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := conn.Prompt(ctx, &acpclient.PromptRequest{
		SessionID: session.SessionID,
		Prompt:    []acpclient.ContentBlock{acpclient.TextBlock("Stream")},
	}); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("deltas %q, notifications %q\n", client.deltas.String(), client.text.String())
	// Output:
	// deltas "Streamed lean.", notifications ""
}
