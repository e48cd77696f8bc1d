package bridge

import (
	"context"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/internal/sshdtest"
	"github.com/acphost/acphost/internal/sshtest"
)

// termRunner is where a test's terminals run: for each fixture, options
// with its runner and, on an SSH host, how the host dies for the terminal
// (the connection drops).
type termRunner struct {
	name  string
	setup func(t *testing.T) (opts *terminal.Options, dropHost func())
}

// eachRunner runs test with the terminals on this machine, on the
// in-process SSH server and on the real sshd (skipped where sshd is not
// installed); the servers run here, so the process table in /proc shows
// the remote processes too.
func eachRunner(t *testing.T, test func(t *testing.T, r termRunner)) {
	t.Run("local", func(t *testing.T) {
		test(t, termRunner{name: "local", setup: func(*testing.T) (*terminal.Options, func()) { return &terminal.Options{}, nil }})
	})
	t.Run("sshtest", func(t *testing.T) {
		srv := sshtest.Start(t, nil)
		test(t, termRunner{name: "sshtest", setup: func(t *testing.T) (*terminal.Options, func()) {
			return &terminal.Options{Runner: terminal.SSH{Dial: fixedClient(srv.Dial(t))}}, srv.DropConnections
		}})
	})
	t.Run("sshd", func(t *testing.T) {
		srv := sshdtest.Start(t)
		test(t, termRunner{name: "sshd", setup: func(t *testing.T) (*terminal.Options, func()) {
			client := srv.Dial(t)
			return &terminal.Options{Runner: terminal.SSH{Dial: fixedClient(client)}}, func() { client.Close() }
		}})
	})
}

func fixedClient(c *ssh.Client) func(context.Context) (*ssh.Client, error) {
	return func(context.Context) (*ssh.Client, error) { return c, nil }
}

// opts returns the runner's options for one fixture.
func (r termRunner) opts(t *testing.T) *terminal.Options {
	o, _ := r.setup(t)
	return o
}
