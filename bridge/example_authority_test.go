package bridge_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
)

// ExampleSession_Authority opens a session of an agent whose own mode
// would approve its edits unasked, under host Build: the bridge moves it
// to the mode that asks before the session is ready, and refuses the
// app's own attempt to switch it back, before anything is sent.
func ExampleSession_Authority() {
	ctx := context.Background()
	host, stop := texts("/w")
	defer stop()
	agent := &acptest.Transport{Script: acptest.Script{NewSession: acptest.NewSessionScript{
		Modes: []byte(`{"currentModeId":"acceptEdits","availableModes":[{"id":"default","name":"Ask first"},{"id":"acceptEdits","name":"Accept edits"}]}`),
	}}}
	modes := &bridge.ModeTable{Asking: "default", Auto: []string{"acceptEdits"}, Source: "an example agent"}
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: agent, AgentModes: modes})
	if err != nil {
		log.Fatal(err)
	}
	session, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: "/w", Policy: bridge.Policy{Mode: bridge.ModeBuild}})
	if err != nil {
		log.Fatal(err)
	}
	a := session.Authority()
	fmt.Println(a.State, "-", a.Reason)
	err = session.SetAgentMode(ctx, "acceptEdits")
	fmt.Println(errors.Is(err, bridge.ErrAgentAutonomous), err)
	if _, err := session.Prompt(ctx, acpclient.TextBlock("hi")); err != nil {
		log.Fatal(err)
	}
	// Output:
	// protected - agent mode "default" asks before acting
	// true bridge: host mode build does not allow agent mode "acceptEdits" (it acts without asking)
}

// ExampleSession_GrantAutonomy opens a session of an agent that acts
// without asking and has no mode that asks, under host Build: the app is
// asked for its consent (ConsentNeeded) and prompts are refused until it
// gives it, once for the session.
func ExampleSession_GrantAutonomy() {
	ctx := context.Background()
	host, stop := texts("/w")
	defer stop()
	agent := &acptest.Transport{Script: acptest.Script{NewSession: acptest.NewSessionScript{
		Modes: []byte(`{"currentModeId":"yolo","availableModes":[{"id":"yolo","name":"Does it all"}]}`),
	}}}
	modes := &bridge.ModeTable{Auto: []string{"yolo"}, Source: "an example agent"}
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: agent, AgentModes: modes})
	if err != nil {
		log.Fatal(err)
	}
	session, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: "/w", Policy: bridge.Policy{Mode: bridge.ModeBuild}})
	if err != nil {
		log.Fatal(err)
	}
	if a := session.Authority(); a.ConsentNeeded {
		_, err := session.Prompt(ctx, acpclient.TextBlock("hi"))
		fmt.Println(errors.Is(err, bridge.ErrAgentAutonomous))
		// Ask the user here, as a CLI asks before a dangerous choice.
		session.GrantAutonomy()
	}
	a := session.Authority()
	fmt.Println(a.State, a.Blocked, "-", a.Reason)
	if _, err := session.Prompt(ctx, acpclient.TextBlock("hi")); err != nil {
		log.Fatal(err)
	}
	// Output:
	// true
	// agent-autonomous false - agent mode "yolo" acts without asking; the app consented
}
