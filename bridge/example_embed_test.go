package bridge_test

import (
	"context"
	"fmt"
	"log"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/fsroot"
	"github.com/acphost/acphost/sshconn"
)

// Example_embedding is an app embedding a real agent: one event loop for
// every agent, a session whose files are confined to the project, one turn.
// (It needs claude-agent-acp installed, so it is compiled, not run; the
// package Example runs the same shape against a fake agent.)
func Example_embedding() {
	ctx := context.Background()
	host := bridge.NewHost(nil)
	go func() {
		for ev := range host.Events() { // one ordered stream for every agent
			switch ev.Kind {
			case bridge.KindText:
				fmt.Print(ev.Text)
			case bridge.KindPermission:
				ev.Permission.Allow() // or Reject; the app decides (Build mode)
			case bridge.KindTurnEnd:
				fmt.Println("\n[", ev.StopReason, "]")
			}
		}
	}()
	agent, err := host.Start(ctx, bridge.Config{ID: "claude", Transport: acpclient.Command("claude-agent-acp")})
	if err != nil {
		log.Fatal(err)
	}
	files, _ := fsroot.NewLocal("/home/me/project", nil)
	session, err := agent.OpenSession(ctx, bridge.SessionConfig{
		Cwd: "/home/me/project", Files: files, Policy: bridge.Policy{Mode: bridge.ModeBuild},
	})
	if err != nil {
		log.Fatal(err)
	}
	stop, err := session.Prompt(ctx, acpclient.TextBlock("Fix the failing test"))
	fmt.Println(stop, err)
	host.Shutdown(ctx)
}

// ExampleSSHHosts runs an agent in a remote workspace: the agent on the
// host, its file calls over SFTP on the same shared connection. (It needs
// an SSH host, so it is compiled, not run.)
func ExampleSSHHosts() {
	ctx := context.Background()
	hosts := bridge.NewSSHHosts(sshconn.Config{}) // ssh-agent keys, ~/.ssh/known_hosts
	defer hosts.Close()
	ws, _ := bridge.ParseWorkspace("ssh://me@build-box/srv/app")
	transport, _ := hosts.Transport(ws, []string{"claude-agent-acp"}, nil)
	files, _ := hosts.Files(ctx, ws)

	host := bridge.NewHost(nil)
	defer host.Shutdown(ctx)
	agent, err := host.Start(ctx, bridge.Config{ID: "remote", Transport: transport})
	if err != nil {
		log.Fatal(err)
	}
	session, err := agent.OpenSession(ctx, bridge.SessionConfig{Cwd: ws.Path, Files: files})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(session.ID())
}

// ExampleHost_StartProfile starts an agent from a profile: one of package
// profiles (profiles.Lookup), a vendor package's, or the app's own, as
// here. The profile finds the binary and builds its command line; the
// bridge can relaunch it with new options. (It needs the program
// installed, so it is compiled, not run.)
func ExampleHost_StartProfile() {
	ctx := context.Background()
	myAgent := &bridge.Profile{
		Name:     "myagent",
		Binaries: []string{"myagent"},
		Args: func(o bridge.LaunchOptions) ([]string, error) {
			args := []string{"--acp"}
			if o.AgentMode != "" {
				args = append(args, "--persona", o.AgentMode)
			}
			return args, nil
		},
		AgentModeAtLaunch: func(string) bool { return true },
	}
	host := bridge.NewHost(nil)
	defer host.Shutdown(ctx)
	agent, err := host.StartProfile(ctx, myAgent, bridge.LaunchOptions{Cwd: "/home/me/project", AgentMode: "reviewer"}, bridge.Config{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(agent.ID(), agent.Launch().Options().AgentMode)
}

// ExampleHost_Add adds the agents a user may pick without starting them:
// the one picked starts when its first session opens, and that session's
// workspace is recorded (its first checkpoint, with git) while it starts.
func ExampleHost_Add() {
	ctx := context.Background()
	host := bridge.NewHost(nil)
	defer host.Shutdown(ctx)
	go func() {
		for range host.Events() { // an app shows them
		}
	}()
	for _, id := range []string{"claude", "codex"} {
		// An app would use acpclient.Command("claude-agent-acp") or similar.
		if _, err := host.Add(bridge.Config{ID: id, Transport: &acptest.Transport{}}); err != nil {
			log.Fatal(err)
		}
	}
	picked, _ := host.Bridge("codex")
	fmt.Println("before:", picked.Running())
	if _, err := picked.OpenSession(ctx, bridge.SessionConfig{Cwd: "/tmp"}); err != nil {
		log.Fatal(err)
	}
	other, _ := host.Bridge("claude")
	fmt.Println("after:", picked.Running(), other.Running())
	// Output:
	// before: false
	// after: true false
}
