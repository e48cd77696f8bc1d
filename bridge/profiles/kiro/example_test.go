package kiro_test

import (
	"context"
	"fmt"
	"log"

	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/profiles/kiro"
)

// ExampleProfile picks kiro-cli's agent (the generic AgentMode) and shows
// the command line; the model, effort and tool search (kiro.Options) go
// into the workspace overlay written before the process starts.
func ExampleProfile() {
	cmd, _, err := kiro.Profile.Command(context.Background(), bridge.LaunchOptions{
		Binary:    "/bin/sh", // where kiro-cli is installed
		AgentMode: "reviewer",
		Vendor:    kiro.Options{},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cmd.Args)
	fmt.Println(kiro.Profile.TakesAgentMode("reviewer"))
	// Output:
	// [acp --agent reviewer]
	// true
}
