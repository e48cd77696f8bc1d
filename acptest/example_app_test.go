package acptest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
)

// Example is an app's test of its event handling without a real agent: a
// bridge.Host runs the fake agent through an acptest.Transport, the test
// prompts it, answers what the app would answer and checks the events and
// what the agent received.
func Example() {
	ctx := context.Background()
	agent := &acptest.Transport{Script: acptest.Script{Prompts: []acptest.Turn{{
		Match: "fix",
		Steps: []acptest.Step{
			{Update: json.RawMessage(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Edit main.go","kind":"edit"}`)},
			{Permission: &acptest.Permission{
				ToolCall: json.RawMessage(`{"toolCallId":"t1"}`),
				OnReject: []acptest.Step{{Text: "Leaving main.go alone."}},
			}},
		},
	}}}}

	host := bridge.NewHost(nil)
	done := make(chan struct{})
	go func() { // the app's event loop under test
		defer close(done)
		for ev := range host.Events() {
			switch ev.Kind {
			case bridge.KindPermission:
				fmt.Println("asked:", ev.Tool.Title)
				ev.Permission.Reject()
			case bridge.KindText:
				fmt.Println("text:", ev.Text)
			}
		}
	}()
	b, err := host.Start(ctx, bridge.Config{ID: "fake", Transport: agent})
	if err != nil {
		log.Fatal(err)
	}
	session, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: "/tmp", Policy: bridge.Policy{Mode: bridge.ModeBuild}})
	if err != nil {
		log.Fatal(err)
	}
	stop, err := session.Prompt(ctx, acpclient.TextBlock("fix the bug"))
	if err != nil {
		log.Fatal(err)
	}
	host.Shutdown(ctx)
	<-done
	fmt.Println("stop:", stop)
	for _, m := range agent.Agents()[0].Received() {
		if m.Method != "" { // requests and notifications; the rest are answers
			fmt.Println("agent received:", m.Method)
		}
	}
	// Output:
	// asked: Edit main.go
	// text: permission: selected reject
	// text: Leaving main.go alone.
	// stop: end_turn
	// agent received: initialize
	// agent received: session/new
	// agent received: session/prompt
}
