package crewcoder_test

import (
	"context"
	"fmt"
	"log"

	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/profiles"
	"github.com/acphost/acphost/bridge/profiles/crewcoder"
)

// ExampleOptions chooses CrewCoder's approval policy (its own option) and
// its agent profile (the generic AgentMode), and shows the command line.
func ExampleOptions() {
	cmd, _, err := crewcoder.Profile.Command(context.Background(), bridge.LaunchOptions{
		Binary:    "/bin/sh", // where crewcoder is installed
		AgentMode: "plugin",
		Vendor:    crewcoder.Options{Approval: crewcoder.Never},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cmd.Args)
	// Output:
	// [acp --approval never --mode plugin]
}

// Example_startProfile starts CrewCoder from the registry with its own
// options. (It needs crewcoder installed, so it is compiled, not run.)
func Example_startProfile() {
	ctx := context.Background()
	host := bridge.NewHost(nil)
	defer host.Shutdown(ctx)
	p, _ := profiles.Lookup("crewcoder")
	agent, err := host.StartProfile(ctx, p, bridge.LaunchOptions{
		Cwd:       "/home/me/project",
		AgentMode: "plugin",                                     // crewcoder --mode
		Vendor:    crewcoder.Options{Approval: crewcoder.Never}, // the profile's own options
	}, bridge.Config{ID: "crewcoder"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(agent.ID())
}
