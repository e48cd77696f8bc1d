package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/journal"
)

// forkingAgent is a fake agent that advertises session/fork and answers
// "Hi" with "Hello" and "Thanks" with "You're welcome".
func forkingAgent() *acptest.Transport {
	return &acptest.Transport{Script: acptest.Script{
		Initialize: acptest.InitializeScript{AgentCapabilities: json.RawMessage(
			`{"loadSession":true,"sessionCapabilities":{"list":{},"resume":{},"close":{},"fork":{}}}`)},
		Prompts: []acptest.Turn{
			{Match: "Hi", Steps: []acptest.Step{{Text: "Hello"}}},
			{Match: "Thanks", Steps: []acptest.Step{{Text: "You're welcome"}}},
		},
	}}
}

// journaledHost is a Host whose events go to a journal in dir, and whose
// event stream is drained; stop shuts both down.
func journaledHost(dir string) (*bridge.Host, *journal.DB, func()) {
	db, err := journal.Open(context.Background(), filepath.Join(dir, "journal.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	host := bridge.NewHost(&bridge.HostOptions{Journal: db})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range host.Events() {
		}
	}()
	return host, db, func() {
		host.Shutdown(context.Background())
		<-done
		db.Close()
	}
}

// ExampleSession_Fork forks a conversation after its first turn and goes
// on in the fork: the parent is untouched, the fork names its parent and
// the turn it branched after, and the session list links the two, so a UI
// can draw them as a tree.
func ExampleSession_Fork() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "fork-example-")
	defer os.RemoveAll(dir)
	host, _, stop := journaledHost(dir)
	defer stop()
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: forkingAgent()})
	if err != nil {
		log.Fatal(err)
	}
	chat, err := b.OpenSession(ctx, bridge.SessionConfig{Key: "chat", Cwd: dir})
	if err != nil {
		log.Fatal(err)
	}
	chat.Prompt(ctx, acpclient.TextBlock("Hi"))

	branch, err := chat.Fork(ctx, bridge.ForkOptions{Key: "chat-branch"})
	if err != nil {
		log.Fatal(err)
	}
	origin := branch.Ready().Fork
	fmt.Printf("%s forked from %s after turn %d\n", branch.Key(), origin.Parent, origin.AfterTurn)
	branch.Prompt(ctx, acpclient.TextBlock("Thanks"))

	list, err := host.Sessions(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range list {
		if e.Fork != nil {
			fmt.Println(e.Key, "is a fork of", e.Fork.Parent)
		} else {
			fmt.Println(e.Key, "is a root")
		}
	}
	// Unordered output:
	// chat-branch forked from chat after turn 1
	// chat-branch is a fork of chat
	// chat is a root
}

// ExampleSession_CanFork asks, before offering the actions, whether a
// session can be forked ("branch") and rewound to before a past turn
// ("edit and resend"): the agent forks only at the end of a session, so
// the second is refused with acpclient.ErrUnsupported, saying why.
func ExampleSession_CanFork() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "fork-example-")
	defer os.RemoveAll(dir)
	host, _, stop := journaledHost(dir)
	defer stop()
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: forkingAgent()})
	if err != nil {
		log.Fatal(err)
	}
	chat, err := b.OpenSession(ctx, bridge.SessionConfig{Key: "chat", Cwd: dir})
	if err != nil {
		log.Fatal(err)
	}
	chat.Prompt(ctx, acpclient.TextBlock("Hi"))

	fmt.Println("branch:", chat.CanFork(0) == nil)
	err = chat.CanFork(1) // edit the message of turn 1 and send it again
	fmt.Println("edit and resend:", err == nil, errors.Is(err, acpclient.ErrUnsupported))
	// Output:
	// branch: true
	// edit and resend: false true
}

// ExampleHistory reads a fork's history from the journal, as a program
// showing it without running a Host would: the parent's events up to the
// fork, under the parent's key, then the fork's own. What the parent did
// after the fork is not part of it.
func ExampleHistory() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "fork-example-")
	defer os.RemoveAll(dir)
	host, db, stop := journaledHost(dir)
	defer stop()
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: forkingAgent()})
	if err != nil {
		log.Fatal(err)
	}
	chat, err := b.OpenSession(ctx, bridge.SessionConfig{Key: "chat", Cwd: dir})
	if err != nil {
		log.Fatal(err)
	}
	chat.Prompt(ctx, acpclient.TextBlock("Hi"))
	branch, err := chat.Fork(ctx, bridge.ForkOptions{Key: "chat-branch"})
	if err != nil {
		log.Fatal(err)
	}
	chat.Prompt(ctx, acpclient.TextBlock("Hi again")) // the parent's alone
	branch.Prompt(ctx, acpclient.TextBlock("Thanks"))
	host.Shutdown(ctx) // every event journaled

	for ev, err := range bridge.History(ctx, db, "chat-branch") {
		if err != nil {
			log.Fatal(err)
		}
		switch ev.Kind {
		case bridge.KindTurnStart, bridge.KindText:
			fmt.Printf("%s turn %d %s: %s\n", ev.Key, ev.Turn, ev.Kind, ev.Text)
		}
	}
	// Output:
	// chat turn 1 turn_start: Hi
	// chat turn 1 text: Hello
	// chat-branch turn 2 turn_start: Thanks
	// chat-branch turn 2 text: You're welcome
}

// ExampleForkOptions_transcript branches a conversation with an agent that
// cannot fork, by the app's explicit choice of a transcript fork: a new
// session whose first prompt carries the earlier turns as a transcript,
// marked as such in the fork's origin and in its first turn_start.
func ExampleForkOptions_transcript() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "fork-example-")
	defer os.RemoveAll(dir)
	host, db, stop := journaledHost(dir) // the transcript is read from the journal
	defer stop()
	agent := &acptest.Transport{Script: acptest.Script{Prompts: []acptest.Turn{
		{Match: "Thanks", Steps: []acptest.Step{{Text: "You're welcome"}}},
		{Match: "Hi", Steps: []acptest.Step{{Text: "Hello"}}},
	}}}
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: agent})
	if err != nil {
		log.Fatal(err)
	}
	chat, err := b.OpenSession(ctx, bridge.SessionConfig{Key: "chat", Cwd: dir})
	if err != nil {
		log.Fatal(err)
	}
	chat.Prompt(ctx, acpclient.TextBlock("Hi"))
	fmt.Println("the agent forks:", chat.CanFork(0) == nil)

	branch, err := chat.Fork(ctx, bridge.ForkOptions{Key: "chat-branch", Transcript: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("transcript fork:", branch.Ready().Fork.Transcript)
	branch.Prompt(ctx, acpclient.TextBlock("Thanks"))
	host.Shutdown(ctx)

	for ev := range bridge.History(ctx, db, "chat-branch") {
		if ev.Kind == bridge.KindTurnStart && ev.Key == "chat-branch" {
			fmt.Println(ev.Text)
		}
	}
	// Output:
	// the agent forks: false
	// transcript fork: true
	// [Transcript of an earlier conversation, given as context only. It is not a request: the request is the message after the transcript.]
	// User: Hi
	// Assistant: Hello
	// [End of the transcript.]
	// Thanks
}
