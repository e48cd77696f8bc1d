package sshconn_test

import (
	"context"
	"fmt"
	"log"

	"github.com/acphost/acphost/sshconn"
)

// ExampleParse reads a destination in its one string form.
func ExampleParse() {
	for _, s := range []string{"me@build-box", "me@build-box:2222", "build-box"} {
		dest, err := sshconn.Parse(s)
		fmt.Println(dest, err)
	}
	// Output:
	// me@build-box:22 <nil>
	// me@build-box:2222 <nil>
	// build-box:22 <nil>
}

// ExampleDial dials a host once, with ssh-agent keys and the host verified
// against ~/.ssh/known_hosts. (It needs an SSH host, so it is compiled, not
// run.) sshconn.New instead keeps a connection that is dialled on first use
// and again after it drops.
func ExampleDial() {
	dest, _ := sshconn.Parse("me@build-box")
	client, err := sshconn.Dial(context.Background(), dest, sshconn.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	fmt.Println(string(client.ServerVersion()))
}
