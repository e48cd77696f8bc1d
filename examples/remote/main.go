// Command remote runs an ACP agent in an SSH workspace: the agent process
// starts on the remote host, in the workspace directory, and its file reads
// and writes are served over SFTP on the same SSH connection, confined to
// that directory. It is the shortest complete use of bridge.Workspace and
// bridge.SSHHosts (whose connections are sshconn's).
//
//	go run ./examples/remote -agent 'gemini --acp' ssh://me@build-box/home/me/project "Run the tests"
//
// The host key is checked against ~/.ssh/known_hosts (or -known-hosts);
// keys come from ssh-agent and -key. Permission requests are allowed.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/examples/internal/cmdline"
	"github.com/acphost/acphost/sshconn"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "remote:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("remote", flag.ContinueOnError)
	agent := fs.String("agent", "", "the ACP agent command to run on the remote host (required)")
	key := fs.String("key", "", "a private key file (unencrypted) to log in with")
	knownHosts := fs.String("known-hosts", "", "the known_hosts file (default ~/.ssh/known_hosts)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: remote -agent 'COMMAND ARGS…' ssh://user@host[:port]/abs/path \"prompt\"")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *agent == "" || fs.NArg() < 2 {
		fs.Usage()
		return fmt.Errorf("need -agent, a workspace and a prompt")
	}
	argv, err := cmdline.Split(*agent)
	if err != nil {
		return fmt.Errorf("-agent: %w", err)
	}
	ws, err := bridge.ParseWorkspace(fs.Arg(0))
	if err != nil {
		return err
	}
	prompt := strings.Join(fs.Args()[1:], " ")

	var dial sshconn.Config // ssh-agent keys, ~/.ssh/known_hosts
	if *key != "" {
		dial.KeyFiles = []string{*key}
	}
	if *knownHosts != "" {
		dial.KnownHostsFiles = []string{*knownHosts}
	}
	hosts := bridge.NewSSHHosts(dial) // one connection per host, shared by the agent and its files
	defer hosts.Close()

	ctx := context.Background()
	transport, err := hosts.Transport(ws, argv, nil)
	if err != nil {
		return err
	}
	files, err := hosts.Files(ctx, ws)
	if err != nil {
		return err
	}
	defer files.Close()

	host := bridge.NewHost(nil)
	shown := make(chan struct{})
	go func() {
		defer close(shown)
		for ev := range host.Events() {
			switch ev.Kind {
			case bridge.KindText:
				fmt.Fprint(stdout, ev.Text)
			case bridge.KindToolStart:
				fmt.Fprintf(stdout, "\n[tool: %s]\n", ev.Tool.Title)
			case bridge.KindPermission:
				ev.Permission.Allow()
			case bridge.KindTurnEnd:
				fmt.Fprintf(stdout, "\n[turn ended: %s]\n", ev.StopReason)
			}
		}
	}()
	defer func() {
		host.Shutdown(ctx)
		<-shown
	}()

	b, err := host.Start(ctx, bridge.Config{ID: ws.SSH.Host, Transport: transport})
	if err != nil {
		return err
	}
	session, err := b.OpenSession(ctx, bridge.SessionConfig{
		Cwd: ws.Path, Files: files, Policy: bridge.Policy{Mode: bridge.ModeBuild},
	})
	if err != nil {
		return err
	}
	stop, err := session.Prompt(ctx, acpclient.TextBlock(prompt))
	if err == nil && stop != acpclient.StopEndTurn {
		err = fmt.Errorf("the turn ended with %s", stop)
	}
	return err
}
