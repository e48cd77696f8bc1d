package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
)

// ExampleBridge_Logout signs an agent out, as a "sign out" menu item
// would; every subscriber learns of it from an agent-wide notice.
func ExampleBridge_Logout() {
	ctx := context.Background()
	host := bridge.NewHost(nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range host.Events() {
			if ev.Kind == bridge.KindNotice {
				fmt.Println(ev.Bridge+":", ev.Text)
			}
		}
	}()
	agent := &acptest.Transport{Script: acptest.Script{Initialize: acptest.InitializeScript{
		AgentCapabilities: json.RawMessage(`{"auth":{"logout":{}}}`)}}}
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: agent})
	if err != nil {
		log.Fatal(err)
	}
	if err := b.Logout(ctx); err != nil {
		log.Fatal(err)
	}
	host.Shutdown(ctx)
	<-done
	// Output:
	// demo: signed out of the agent (logout)
}

// ExampleWithPromptMeta sends a prompt with the W3C trace context of the
// app's span, so the agent's work joins the app's trace; the turn_start
// event (and so the journal) keeps it.
func ExampleWithPromptMeta() {
	ctx := context.Background()
	host := bridge.NewHost(nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range host.Events() {
			if ev.Kind == bridge.KindTurnStart {
				fmt.Printf("%s %s\n", ev.Text, ev.Raw)
			}
		}
	}()
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: &acptest.Transport{}})
	if err != nil {
		log.Fatal(err)
	}
	s, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		log.Fatal(err)
	}
	// With OpenTelemetry, these come from the span in ctx (a propagator's
	// Inject into a map carrier).
	trace := json.RawMessage(`{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}`)
	if _, err := s.Prompt(bridge.WithPromptMeta(ctx, trace), acpclient.TextBlock("Hi")); err != nil {
		log.Fatal(err)
	}
	host.Shutdown(ctx)
	<-done
	// Output:
	// Hi {"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
}

// ExampleHost_Sessions lists every session an app could reopen, across
// its agents: open ones, journaled ones, and those a running agent lists
// itself (session/list), such as one started in the agent's own UI.
func ExampleHost_Sessions() {
	ctx := context.Background()
	host := bridge.NewHost(nil)
	go func() {
		for range host.Events() {
		}
	}()
	defer host.Shutdown(ctx)
	agent := &acptest.Transport{Script: acptest.Script{
		NewSession:  acptest.NewSessionScript{SessionIDs: []string{"sess_new"}},
		LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_elsewhere"}},
	}}
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: agent})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := b.OpenSession(ctx, bridge.SessionConfig{Key: "chat-1", Cwd: "/w"}); err != nil {
		log.Fatal(err)
	}
	list, err := host.Sessions(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range list {
		fmt.Printf("%s key=%q native=%s open=%v listed by the agent=%v\n", e.Bridge, e.Key, e.NativeID, e.Open, e.AgentListed)
	}
	// Output:
	// demo key="chat-1" native=sess_new open=true listed by the agent=true
	// demo key="" native=sess_elsewhere open=false listed by the agent=true
}
