package bridge_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
)

// ExampleSession_Close opens a session under the app's own key, learns how
// it opened from Ready, closes it, and opens it again by the key alone: the
// record saved under the key (here in a FileStore; with a Host journal,
// there) names the native session to resume.
func ExampleSession_Close() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	store := bridge.NewFileStore(filepath.Join(dir, "sessions.json"))
	host, stop := texts(dir)
	defer stop()
	agent := &acptest.Transport{Script: acptest.Script{NewSession: acptest.NewSessionScript{SessionIDs: []string{"sess_1"}}}}
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: agent})
	if err != nil {
		log.Fatal(err)
	}
	s, err := b.OpenSession(ctx, bridge.SessionConfig{Key: "chat-1", Cwd: dir, Store: store})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Key(), s.ID(), "resumed:", s.Ready().Resumed)
	if err := s.Close(ctx); err != nil {
		log.Fatal(err)
	}
	again, err := b.OpenSession(ctx, bridge.SessionConfig{Key: "chat-1", Store: store})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(again.Key(), again.ID(), "resumed:", again.Ready().Resumed)
	list, _ := b.ListSessions(ctx)
	for _, e := range list {
		fmt.Println(e.Key, e.NativeID, "open:", e.Open, "listed by the agent:", e.AgentListed)
	}
	// Output:
	// chat-1 sess_1 resumed: false
	// chat-1 sess_1 resumed: true
	// chat-1 sess_1 open: true listed by the agent: true
}
