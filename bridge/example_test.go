package bridge_test

import (
	"context"
	"fmt"
	"log"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
)

// Example shows an app hosting an agent: start it, open a session, prompt,
// and show the event stream, answering the permission request.
func Example() {
	ctx := context.Background()
	host := bridge.NewHost(nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range host.Events() {
			switch ev.Kind {
			case bridge.KindText:
				fmt.Printf("text: %s\n", ev.Text)
			case bridge.KindToolStart:
				fmt.Printf("tool: %s\n", ev.Tool.Title)
			case bridge.KindPermission:
				fmt.Printf("permission asked for %s\n", ev.Tool.Title)
				ev.Permission.Allow()
			case bridge.KindTurnEnd:
				fmt.Printf("turn ended: %s\n", ev.StopReason)
			}
		}
	}()

	// The agent here is acptest's in-process fake; an app would use
	// acpclient.Command("claude-agent-acp") or similar.
	agent := &acptest.Transport{Script: acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Update: []byte(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Edit main.go","kind":"edit"}`)},
		{Permission: &acptest.Permission{ToolCall: []byte(`{"toolCallId":"t1"}`)}},
	}}}}}
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: agent})
	if err != nil {
		log.Fatal(err)
	}
	session, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: "/tmp", Policy: bridge.Policy{Mode: bridge.ModeBuild}})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := session.Prompt(ctx, acpclient.TextBlock("Fix the bug")); err != nil {
		log.Fatal(err)
	}
	host.Shutdown(ctx)
	<-done
	// Output:
	// tool: Edit main.go
	// permission asked for Edit main.go
	// text: permission: selected allow
	// turn ended: end_turn
}
