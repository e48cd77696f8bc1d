// Command multiagent runs several agents on the same prompt at once and
// shows their answers from one bridge.Host event stream, each line
// labelled with the agent it came from. It shows how an app hosts many
// agents: one Host, one Start and one session per agent, one goroutine
// reading Events for all of them.
//
//	go run ./examples/multiagent "Describe this folder"
//	go run ./examples/multiagent -n 3 "…"
//	go run ./examples/multiagent -provider claude -provider gemini "…"
//	go run ./examples/multiagent -agent 'gemini --acp' -agent 'opencode acp' "…"
//
// By default it runs two built-in demo agents (the in-process agent of
// acprun), each in its own subdirectory of a new temporary workspace,
// which is removed when they are done or interrupted (Ctrl-C, SIGTERM)
// (pass -cwd to keep their notes);
// -provider runs a built-in profile's agent and -agent any ACP agent, in
// -cwd instead. Each line is labelled with the profile's title, or the
// agent's own name from its initialize answer (agentInfo), or the demo
// agent's name; a second agent of the same name is numbered. Profiles'
// agents get a minimal environment (bridge.Profile.MinimalEnv). Permission
// requests are allowed, each one labelled, as an app in Build mode would
// after asking.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
)

// repeated collects a flag given several times.
type repeated []string

func (a *repeated) String() string     { return strings.Join(*a, ", ") }
func (a *repeated) Set(v string) error { *a = append(*a, v); return nil }

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "multiagent:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("multiagent", flag.ContinueOnError)
	n := fs.Int("n", 2, "how many demo agents to run")
	pace := fs.Duration("pace", 0, "the demo agents' pause between streamed pieces (default 30ms)")
	cwd := fs.String("cwd", "", "the workspace: -agent and -provider agents run in it, demo agents in subdirectories of it (default: the current directory for -agent and -provider, a temporary directory removed at the end for demo agents)")
	var agents, providers repeated
	fs.Var(&agents, "agent", "an ACP agent command to run instead of the demo agents (repeat it)")
	fs.Var(&providers, "provider", "a built-in profile's agent to run instead of the demo agents (repeat it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	prompt := strings.Join(fs.Args(), " ")
	if prompt == "" {
		prompt = "Say hello and leave a note in the workspace"
	}
	plan, err := planAgents(agents, providers, *n, *cwd, *pace)
	if err != nil {
		return err
	}
	defer plan.cleanup()

	// Ctrl-C or SIGTERM cancels the turns and the starts, so the deferred
	// cleanup runs: the temporary workspace does not outlive the program.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	host := bridge.NewHost(nil)
	out := &labelled{w: stdout, partial: map[string]string{}, message: map[string]string{}, labels: map[string]string{}}
	shown := make(chan struct{})
	go func() {
		defer close(shown)
		for ev := range host.Events() {
			out.show(ev)
		}
	}()

	sessions, closeFiles, err := start(ctx, host, plan.agents, out)
	defer closeFiles()
	if err != nil {
		host.Close()
		<-shown
		return err
	}

	// Every agent works on the prompt at the same time; their events
	// interleave on the one stream, in order within each agent.
	var wg sync.WaitGroup
	errs := make([]error, len(sessions))
	for i, s := range sessions {
		wg.Go(func() {
			stop, err := s.Prompt(ctx, acpclient.TextBlock(prompt))
			if err == nil && stop != acpclient.StopEndTurn {
				err = fmt.Errorf("stopped: %s", stop)
			}
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", out.label(s.Bridge().ID()), err)
			}
		})
	}
	wg.Wait()
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	host.Shutdown(shutdownCtx)
	<-shown
	out.flush()
	if ctx.Err() != nil {
		return errors.New("interrupted")
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
