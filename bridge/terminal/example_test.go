package terminal_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/terminal"
)

// ExampleOptions lets an agent run a command on this machine and
// shows its output live, as terminal events, then its exit.
func ExampleOptions() {
	ctx := context.Background()
	host := bridge.NewHost(nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range host.Events() {
			if ev.Kind != bridge.KindTerminal {
				continue
			}
			if t := ev.Terminal; t.Exit != nil {
				fmt.Printf("%s exited with %d\n", t.ID, *t.Exit.ExitCode)
			} else {
				fmt.Printf("%s: %q\n", t.ID, t.Data)
			}
		}
	}()

	// The fake agent runs one command through terminal/create and
	// terminal/wait_for_exit, as an agent's Bash tool would.
	agent := &acptest.Transport{Script: acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Terminal: &acptest.Terminal{Command: "echo", Args: []string{"built"}}},
	}}}}}
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: agent, Terminals: &terminal.Options{}})
	if err != nil {
		log.Fatal(err)
	}
	// Commands run in Build and Full; in Ask and Plan they are refused.
	session, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: os.TempDir(), Policy: bridge.Policy{Mode: bridge.ModeBuild}})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := session.Prompt(ctx, acpclient.TextBlock("Build it")); err != nil {
		log.Fatal(err)
	}
	host.Shutdown(ctx)
	<-done
	// Output:
	// term-1: "built\n"
	// term-1 exited with 0
}
