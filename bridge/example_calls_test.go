package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

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
