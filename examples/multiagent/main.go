// Command multiagent runs several agents on the same prompt at once and
// shows their answers from one bridge.Host event stream, each line
// labelled with the agent it came from. It shows how an app hosts many
// agents: one Host, one Start and one session per agent, one goroutine
// reading Events for all of them.
//
//	go run ./examples/multiagent "Describe this folder"
//	go run ./examples/multiagent -n 3 "…"
//	go run ./examples/multiagent -agent 'gemini --acp' -agent 'opencode acp' "…"
//
// By default it runs two built-in demo agents (the in-process agent of
// acprun), each in its own subdirectory of a new temporary workspace;
// -agent runs real ACP agents in -cwd instead. Permission requests are
// allowed, each one labelled, as an app in Build mode would after asking.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/examples/internal/cmdline"
	"github.com/acphost/acphost/examples/internal/demoagent"
	"github.com/acphost/acphost/fsroot"
)

// agentList collects repeated -agent flags.
type agentList []string

func (a *agentList) String() string     { return strings.Join(*a, ", ") }
func (a *agentList) Set(v string) error { *a = append(*a, v); return nil }

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "multiagent:", err)
		os.Exit(1)
	}
}

// names label the demo agents.
var names = []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("multiagent", flag.ContinueOnError)
	n := fs.Int("n", 2, "how many demo agents to run")
	cwd := fs.String("cwd", "", "the workspace: -agent agents run in it, demo agents in subdirectories of it (default: the current directory for -agent, a new temporary directory for demo agents)")
	var agents agentList
	fs.Var(&agents, "agent", "an ACP agent command to run instead of the demo agents (repeat it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	prompt := strings.Join(fs.Args(), " ")
	if prompt == "" {
		prompt = "Say hello and leave a note in the workspace"
	}
	if len(agents) == 0 && (*n < 1 || *n > len(names)) {
		return fmt.Errorf("-n %d: want 1 to %d", *n, len(names))
	}

	ctx := context.Background()
	host := bridge.NewHost(nil)
	out := &labelled{w: stdout, partial: map[string]string{}}
	shown := make(chan struct{})
	go func() {
		defer close(shown)
		for ev := range host.Events() {
			out.show(ev)
		}
	}()

	sessions, closeFiles, err := start(ctx, host, agents, *n, *cwd)
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
				errs[i] = fmt.Errorf("%s: %w", s.Bridge().ID(), err)
			}
		})
	}
	wg.Wait()
	host.Shutdown(ctx)
	<-shown
	out.flush()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// start starts the agents and opens one session on each. The returned
// function releases their file roots.
func start(ctx context.Context, host *bridge.Host, agents []string, n int, cwd string) ([]*bridge.Session, func(), error) {
	var roots []*fsroot.Local
	closeAll := func() {
		for _, r := range roots {
			r.Close()
		}
	}
	type agent struct {
		id, dir   string
		transport acpclient.Transport
	}
	var list []agent
	if len(agents) > 0 {
		dir, err := filepath.Abs(cmpOr(cwd, "."))
		if err != nil {
			return nil, closeAll, err
		}
		for i, a := range agents {
			argv, err := cmdline.Split(a)
			if err != nil {
				return nil, closeAll, fmt.Errorf("-agent %q: %w", a, err)
			}
			id := fmt.Sprintf("%s-%d", filepath.Base(argv[0]), i+1)
			list = append(list, agent{id, dir, &acpclient.CommandTransport{Path: argv[0], Args: argv[1:], Dir: dir}})
		}
	} else {
		workspace := cwd
		if workspace == "" {
			var err error
			if workspace, err = os.MkdirTemp("", "multiagent-"); err != nil {
				return nil, closeAll, err
			}
			fmt.Fprintf(os.Stderr, "multiagent: workspace %s\n", workspace)
		}
		for _, name := range names[:n] {
			dir, err := filepath.Abs(filepath.Join(workspace, name))
			if err != nil {
				return nil, closeAll, err
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, closeAll, err
			}
			list = append(list, agent{name, dir, &demoagent.Transport{Cwd: dir, Name: name}})
		}
	}

	var sessions []*bridge.Session
	for _, a := range list {
		root, err := fsroot.NewLocal(a.dir, nil)
		if err != nil {
			return nil, closeAll, err
		}
		roots = append(roots, root)
		b, err := host.Start(ctx, bridge.Config{ID: a.id, Transport: a.transport})
		if err != nil {
			return nil, closeAll, fmt.Errorf("starting %s: %w", a.id, err)
		}
		s, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: root.Cwd(), Files: root, Policy: bridge.Policy{Mode: bridge.ModeBuild}})
		if err != nil {
			return nil, closeAll, fmt.Errorf("opening a session on %s: %w", a.id, err)
		}
		sessions = append(sessions, s)
	}
	return sessions, closeAll, nil
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// labelled prints whole lines, each prefixed with its agent's id. Text
// streams in pieces, so each agent's unfinished line waits in partial
// until its newline (or the agent's next non-text event) arrives.
type labelled struct {
	w       io.Writer
	partial map[string]string
}

func (l *labelled) show(ev bridge.Event) {
	switch ev.Kind {
	case bridge.KindText:
		l.text(ev.Bridge, ev.Text)
		return
	case bridge.KindToolStart, bridge.KindToolEnd:
		l.end(ev.Bridge)
		l.println(ev.Bridge, fmt.Sprintf("[tool %s: %s]", ev.Tool.Status, ev.Tool.Title))
	case bridge.KindPermission:
		l.end(ev.Bridge)
		l.println(ev.Bridge, fmt.Sprintf("[permission for %s: allowed]", ev.Tool.Title))
		ev.Permission.Allow()
	case bridge.KindTurnEnd:
		l.end(ev.Bridge)
		l.println(ev.Bridge, "[turn ended: "+ev.StopReason+"]")
	case bridge.KindError:
		l.end(ev.Bridge)
		l.println(ev.Bridge, fmt.Sprintf("[error: %v]", ev.Err))
	}
}

func (l *labelled) text(agent, text string) {
	buf := l.partial[agent] + text
	for {
		i := strings.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		l.println(agent, buf[:i])
		buf = buf[i+1:]
	}
	l.partial[agent] = buf
}

// end prints the agent's unfinished line, if any.
func (l *labelled) end(agent string) {
	if rest := l.partial[agent]; rest != "" {
		l.println(agent, rest)
		l.partial[agent] = ""
	}
}

func (l *labelled) println(agent, line string) {
	fmt.Fprintf(l.w, "%-8s│ %s\n", agent, line)
}

// flush prints every unfinished line.
func (l *labelled) flush() {
	for agent := range l.partial {
		l.end(agent)
	}
}
