package codey_test

import (
	"context"
	"fmt"
	"log"

	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/profiles/codey"
)

// ExampleOptions chooses Codey's own permission mode and shows the command
// line.
func ExampleOptions() {
	cmd, _, err := codey.Profile.Command(context.Background(), bridge.LaunchOptions{
		Binary: "/bin/sh", // where codey is installed
		Vendor: codey.Options{PermissionMode: "acceptEdits", AlwaysApprove: true},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cmd.Args)
	// Output:
	// [agent --permission-mode acceptEdits --always-approve stdio]
}
