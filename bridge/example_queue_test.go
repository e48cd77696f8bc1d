package bridge_test

import (
	"context"
	"fmt"
	"log"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
)

// holding is an agent whose turn "hold" runs until it is cancelled; with
// failing, it then fails the turn instead of ending it cancelled.
func holding(failing bool) *acptest.Transport {
	hold := acptest.Turn{Match: "hold", Steps: []acptest.Step{{Text: "holding"}, {WaitCancel: true}}}
	if failing {
		hold.IgnoreCancel, hold.Error = true, &acptest.Error{Code: -32603, Message: "overloaded"}
	}
	return &acptest.Transport{Script: acptest.Script{Prompts: []acptest.Turn{hold}}}
}

// watch starts a host whose event loop hands each event to show and
// signals on the returned channel when the agent says "holding" and when
// turn last ends; stop shuts the host down and waits for the loop.
func watch(last uint64, show func(bridge.Event)) (host *bridge.Host, signal <-chan string, stop func()) {
	host = bridge.NewHost(nil)
	signals := make(chan string, 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range host.Events() {
			show(ev)
			switch {
			case ev.Kind == bridge.KindText && ev.Text == "holding":
				signals <- "holding"
			case ev.Kind == bridge.KindTurnEnd && ev.Turn == last:
				signals <- "ended"
			}
		}
	}()
	return host, signals, func() {
		host.Shutdown(context.Background())
		<-done
	}
}

// ExampleSession_Enqueue sends prompts while a turn runs: they wait in the
// session's queue and run in order, each as its own turn, once the turn
// ends (here the user cancels it; the queue goes on).
func ExampleSession_Enqueue() {
	ctx := context.Background()
	host, signal, stop := watch(3, func(ev bridge.Event) {
		switch ev.Kind {
		case bridge.KindTurnStart:
			fmt.Printf("turn %d: %s\n", ev.Turn, ev.Text)
		case bridge.KindQueue:
			fmt.Printf("  queue %s, %d waiting\n", ev.Queue.Change, len(ev.Queue.Prompts))
		}
	})
	defer stop()
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: holding(false)})
	if err != nil {
		log.Fatal(err)
	}
	session, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: "/tmp"})
	if err != nil {
		log.Fatal(err)
	}
	go session.Prompt(ctx, acpclient.TextBlock("hold"))
	<-signal // the turn runs
	for _, text := range []string{"write the tests", "update the docs"} {
		if _, err := session.Enqueue(ctx, acpclient.TextBlock(text)); err != nil {
			log.Fatal(err)
		}
	}
	session.Cancel()
	<-signal // the last queued turn has ended
	// Output:
	// turn 1: hold
	//   queue queued, 1 waiting
	//   queue queued, 2 waiting
	// turn 2: write the tests
	//   queue started, 1 waiting
	// turn 3: update the docs
	//   queue started, 0 waiting
}

// ExampleSession_MoveQueued edits the queue before its prompts run: a
// prompt moved to the front, one removed, the rest cleared.
func ExampleSession_MoveQueued() {
	ctx := context.Background()
	host, signal, stop := watch(0, func(bridge.Event) {})
	defer stop()
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: holding(false)})
	if err != nil {
		log.Fatal(err)
	}
	session, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: "/tmp"})
	if err != nil {
		log.Fatal(err)
	}
	ended := make(chan struct{})
	go func() {
		session.Prompt(ctx, acpclient.TextBlock("hold"))
		close(ended)
	}()
	<-signal
	ids := map[string]string{}
	for _, text := range []string{"tests", "docs", "release notes"} {
		ids[text], _ = session.Enqueue(ctx, acpclient.TextBlock(text))
	}
	show := func() {
		prompts, _ := session.Queue()
		for i, p := range prompts {
			fmt.Printf("%d %s\n", i, p.Text)
		}
	}
	session.MoveQueued(ids["release notes"], 0)
	session.RemoveQueued(ids["docs"])
	show()
	session.ClearQueue() // then Cancel: nothing runs after the turn
	session.Cancel()
	<-ended
	show()
	fmt.Println("cleared")
	// Output:
	// 0 release notes
	// 1 tests
	// cleared
}

// ExampleSession_ResumeQueue: a turn that fails pauses the queue rather
// than sending the next prompt into a broken session; the app decides,
// and ResumeQueue runs it.
func ExampleSession_ResumeQueue() {
	ctx := context.Background()
	host, signal, stop := watch(2, func(ev bridge.Event) {
		switch {
		case ev.Kind == bridge.KindTurnStart:
			fmt.Printf("turn %d: %s\n", ev.Turn, ev.Text)
		case ev.Kind == bridge.KindQueue && ev.Queue.Change == "paused":
			fmt.Printf("  paused: %s\n", ev.Queue.Reason)
		}
	})
	defer stop()
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: holding(true)})
	if err != nil {
		log.Fatal(err)
	}
	session, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: "/tmp"})
	if err != nil {
		log.Fatal(err)
	}
	ended := make(chan struct{})
	go func() {
		session.Prompt(ctx, acpclient.TextBlock("hold"))
		close(ended)
	}()
	<-signal
	session.Enqueue(ctx, acpclient.TextBlock("try again"))
	session.Cancel() // the agent fails the turn
	<-ended
	if _, paused := session.Queue(); paused {
		session.ResumeQueue()
	}
	<-signal // turn 2 has ended
	// Output:
	// turn 1: hold
	//   paused: turn 1 failed: acpclient: session/prompt: overloaded (code -32603)
	// turn 2: try again
}

// ExampleSession_Steer puts an instruction into the running turn. This
// agent takes it by the _session/steering extension it advertises; an
// agent without a way would apply the fallback chosen here (queue it as
// the next prompt). The steered text is a user_text event marked Steer,
// in the turn it joined.
func ExampleSession_Steer() {
	ctx := context.Background()
	host, signal, stop := watch(1, func(ev bridge.Event) {
		switch ev.Kind {
		case bridge.KindText:
			fmt.Println("agent:", ev.Text)
		case bridge.KindUserText:
			fmt.Printf("user (steered into turn %d by %s): %s\n", ev.Turn, ev.Steer, ev.Text)
		}
	})
	defer stop()
	agent := &acptest.Transport{Script: acptest.Script{
		Steering: acptest.SteeringScript{Wire: acptest.SteerWireExtension},
		Prompts:  []acptest.Turn{{Steps: []acptest.Step{{Text: "holding"}, {WaitSteer: true}, {Text: "done"}}}},
	}}
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: agent})
	if err != nil {
		log.Fatal(err)
	}
	session, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: "/tmp"})
	if err != nil {
		log.Fatal(err)
	}
	go session.Prompt(ctx, acpclient.TextBlock("fix the bug"))
	<-signal // the turn runs
	if _, err := session.Steer(ctx, "use the v2 API", bridge.SteerQueue); err != nil {
		log.Fatal(err)
	}
	<-signal // the turn has ended
	// Output:
	// agent: holding
	// agent: steered: use the v2 API
	// user (steered into turn 1 by extension): use the v2 API
	// agent: done
}

// ExampleSession_SteerMode labels a Steer button before the user presses
// it: how each agent would take the text, or that the fallback applies.
func ExampleSession_SteerMode() {
	ctx := context.Background()
	host := bridge.NewHost(nil)
	defer host.Shutdown(ctx)
	go func() {
		for range host.Events() {
		}
	}()
	for _, wire := range []string{acptest.SteerWireInject, acptest.SteerWireExtension, ""} {
		agent := &acptest.Transport{Script: acptest.Script{Steering: acptest.SteeringScript{Wire: wire}}}
		b, err := host.Start(ctx, bridge.Config{ID: "agent-" + wire, Transport: agent})
		if err != nil {
			log.Fatal(err)
		}
		session, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: "/tmp"})
		if err != nil {
			log.Fatal(err)
		}
		switch mode := session.SteerMode(); mode {
		case "":
			fmt.Println("Steer (queues it as the next prompt)")
		default:
			fmt.Printf("Steer (%s)\n", mode)
		}
	}
	// Output:
	// Steer (inject)
	// Steer (extension)
	// Steer (queues it as the next prompt)
}
