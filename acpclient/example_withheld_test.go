package acpclient_test

import (
	"fmt"

	"github.com/acphost/acphost/acpclient"
)

// An app that starts its agent with a minimal environment can name, when
// the agent then fails to sign in, the keys of the user's that it left
// out: names only.
func ExampleWithheldCredentials() {
	environ := []string{"PATH=/usr/bin", "HOME=/home/me", "GEMINI_API_KEY=AIza…", "EDITOR=vi"}
	env := acpclient.MinimalEnv(environ)
	fmt.Println(acpclient.WithheldCredentials(environ, env))
	// Output: [GEMINI_API_KEY]
}
