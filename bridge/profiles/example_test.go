package profiles_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/profiles"
	"github.com/acphost/acphost/bridge/profiles/crewcoder"
)

// Example_command shows the command a profile launches for the app's
// choices: generic ones in bridge.LaunchOptions, the profile's own in its
// Vendor value. Host.StartProfile starts it (and Doctor checks it); no
// shell is involved.
func Example_command() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "crewcoder"), []byte("#!/bin/sh\n"), 0o755)

	p, _ := profiles.Lookup("crewcoder")
	cmd, found, err := p.Command(context.Background(), bridge.LaunchOptions{
		Resolver:  &bridge.Resolver{Env: []string{"PATH=" + dir}, NoLoginShell: true},
		AgentMode: "plugin",
		Vendor:    crewcoder.Options{Approval: "not-a-policy"}, // fails closed to review
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(filepath.Base(cmd.Path), cmd.Args, "found in", found.Source)
	// Output:
	// crewcoder [acp --approval review --mode plugin] found in PATH
}

// ExampleLookup lists what an app can ask for by name.
func ExampleLookup() {
	for _, name := range []string{"kiro-cli", "claude", "gemini", "codey"} {
		p, _ := profiles.Lookup(name)
		fmt.Println(name, "→", p.Name, p.Binaries)
	}
	// Output:
	// kiro-cli → kiro [kiro-cli]
	// claude → claude [claude-agent-acp claude-code-acp]
	// gemini → gemini [gemini]
	// codey → codey [codey]
}
