package bridge_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/acphost/acphost/bridge"
)

// ExampleProfile_Command shows the command a profile launches for the
// app's choices. Host.StartProfile starts it (and Doctor checks it); no
// shell is involved.
func ExampleProfile_Command() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	crewcoder := filepath.Join(dir, "crewcoder")
	os.WriteFile(crewcoder, []byte("#!/bin/sh\n"), 0o755)

	p, _ := bridge.LookupProfile("crewcoder")
	cmd, found, err := p.Command(context.Background(), bridge.LaunchOptions{
		Resolver:     &bridge.Resolver{Env: []string{"PATH=" + dir}, NoLoginShell: true},
		Approval:     "not-a-policy", // fails closed to review
		AgentProfile: "plugin",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(filepath.Base(cmd.Path), cmd.Args, "found in", found.Source)
	// Output:
	// crewcoder [acp --approval review --mode plugin] found in PATH
}

// ExampleLookupProfile lists what an app can ask for by name.
func ExampleLookupProfile() {
	for _, name := range []string{"kiro-cli", "claude", "gemini", "codey"} {
		p, _ := bridge.LookupProfile(name)
		fmt.Println(name, "→", p.Name, p.Binaries)
	}
	// Output:
	// kiro-cli → kiro [kiro-cli]
	// claude → claude [claude-agent-acp claude-code-acp]
	// gemini → gemini [gemini]
	// codey → codey [codey]
}
