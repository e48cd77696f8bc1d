package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
)

// chatHelp is "acprun chat -h".
const chatHelp = `usage: acprun chat [flags] [first prompt]

A conversation in one process: every line on stdin (typed at a terminal, or
piped) is a prompt. A line that comes while a turn runs waits in the
session's queue and runs, in order, as a turn of its own. Lines that start
with one of these words are commands:

  /steer TEXT   put TEXT into the running turn, the way the agent offers
                (session/inject, _session/steering or its profile's
                method); without one, or without a running turn, TEXT is
                queued as the next prompt
  /queue        list the queue (on stdout, or on stderr with --events)
  /cancel       cancel the running turn; the queue goes on
  /clear        drop the queue
  /resume       run a queue that paused (after a failed turn, or one the
                resumed session had queued before)

At the end of stdin acprun waits for the queue to run out, then exits: 0
when every turn ended with end_turn, 1 when one did not or the queue was
left paused. Permission requests are answered by --approve allow or reject
(default reject): stdin carries the prompts. With --events stdout carries
the event stream as JSON lines, queue events and steered text included.

flags:
`

// chatFlags are the flags chat reads, as "acprun chat -h" lists them.
var chatFlags = []subFlag{
	{"agent", "", ""}, {"provider", "", ""}, {"cwd", "", ""}, {"resume", "", ""}, {"move-cwd", "", ""},
	{"journal", "", ""}, {"model", "", ""}, {"effort", "", ""}, {"agent-mode", "", ""}, {"auth", "", ""},
	{"mode", "", ""}, {"approve", "answer permission requests in build mode: allow or reject", approveReject},
	{"allow-autonomous", "", ""}, {"timeout", "", ""}, {"events", "", ""}, {"terminals", "", ""},
	{"env", "", ""}, {"env-all", "", ""}, {"v", "", ""},
}

// chatState is what the event loop tells the conversation: turns that
// ended and how, and a signal on every turn end and queue change.
type chatState struct {
	mu      sync.Mutex
	ended   int
	failed  []string // why turns did not end with end_turn
	changed chan struct{}
}

func newChatState() *chatState { return &chatState{changed: make(chan struct{}, 1)} }

// note records a turn's end or a queue change.
func (c *chatState) note(ev bridge.Event) {
	if ev.Kind == bridge.KindTurnEnd {
		c.mu.Lock()
		c.ended++
		switch {
		case ev.Err != nil:
			c.failed = append(c.failed, fmt.Sprintf("turn %d failed: %v", ev.Turn, ev.Err))
		case ev.StopReason != acpclient.StopEndTurn && ev.StopReason != acpclient.StopCancelled:
			c.failed = append(c.failed, fmt.Sprintf("turn %d ended with %s", ev.Turn, ev.StopReason))
		}
		c.mu.Unlock()
	}
	if ev.Kind == bridge.KindTurnEnd || ev.Kind == bridge.KindQueue {
		select {
		case c.changed <- struct{}{}:
		default:
		}
	}
}

// runChat runs a conversation (see chatHelp).
func runChat(o *options) (err error) {
	switch o.approve {
	case approveAsk:
		return fail(exitUsage, "chat reads every line of stdin as a prompt: answer permission requests with --approve allow or reject, or --mode full")
	case "":
		o.approve = approveReject
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	setupCtx, cancelSetup := context.WithTimeout(ctx, o.timeout)
	defer cancelSetup()
	interrupted := make(chan struct{})
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)

	var out output
	if o.events {
		out = newJSONOutput(os.Stdout)
	} else {
		screen := newHuman(os.Stdout, os.Stderr, isTerminal(os.Stdout), palette{on: useColor(isTerminal(os.Stdout))})
		screen.echo = true
		out = screen
	}
	stdin := &lineReader{in: os.Stdin}
	approve := &approver{policy: o.approve, prompt: os.Stderr, stdin: stdin, colors: palette{on: useColor(isTerminal(os.Stderr))}}
	auth := &signer{method: o.auth}
	db, err := startJournal(setupCtx, o)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = fail(exitFailed, "journal: %v", cerr)
		}
	}()
	host := bridge.NewHost(hostOptions(db))
	state := newChatState()
	var closers []io.Closer
	finish := showEvents(host, out, approve, auth, state.note, &closers)
	sess, err := openSession(setupCtx, o, host, false, &closers)
	if jerr := db.opened(); jerr != nil {
		finish()
		return jerr
	}
	if err == nil {
		con := &consenter{allow: o.allowAutonomous, prompt: os.Stderr, stdin: stdin, colors: approve.colors}
		err = con.settle(setupCtx, sess)
	}
	if err != nil {
		finish()
		if auth.reason() != "" {
			return fail(exitAuth, "auth required: %s", auth.reason())
		}
		return setupFailure(err, o.timeout)
	}
	go func() {
		if _, ok := <-signals; !ok {
			return
		}
		close(interrupted)
		sess.ClearQueue()
		sess.Cancel()
		fmt.Fprintln(os.Stderr, "\nacprun: cancelling the turn and dropping the queue (Ctrl-C again to quit at once)")
		if _, ok := <-signals; ok {
			os.Exit(exitInterrupted)
		}
	}()
	c := &chat{sess: sess, out: os.Stdout, events: o.events}
	if first := strings.Join(o.args, " "); first != "" {
		c.line(ctx, first)
	}
	c.converse(ctx, stdin.next(), state, interrupted)
	finish()
	select {
	case <-interrupted:
		return fail(exitInterrupted, "cancelled")
	default:
	}
	if prompts, paused := sess.Queue(); paused && len(prompts) > 0 {
		return fail(exitFailed, "the queue paused with %d prompts left (acprun chat --resume %s, then /resume, runs them)", len(prompts), sess.Key())
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	if len(state.failed) > 0 {
		return fail(exitFailed, "%d of %d turns did not end with end_turn: %s", len(state.failed), state.ended, strings.Join(state.failed, "; "))
	}
	return nil
}

// chat is a conversation's input side: it turns lines into prompts and
// commands on the session.
type chat struct {
	sess   *bridge.Session
	out    io.Writer // stdout
	events bool      // stdout carries events: other output goes to stderr
}

// converse handles lines until stdin ends, then waits until no turn runs
// and the queue is empty or paused; an interrupt ends it at once.
func (c *chat) converse(ctx context.Context, lines <-chan string, state *chatState, interrupted <-chan struct{}) {
	for lines != nil {
		select {
		case line, ok := <-lines:
			if !ok {
				lines = nil
				break
			}
			c.line(ctx, line)
		case <-interrupted:
			return
		}
	}
	for {
		prompts, paused := c.sess.Queue()
		if !c.sess.Busy() && (len(prompts) == 0 || paused) {
			return
		}
		select {
		case <-state.changed:
		case <-interrupted:
			return
		}
	}
}

// line handles one line: a command, or a prompt.
func (c *chat) line(ctx context.Context, line string) {
	text := strings.TrimSpace(line)
	word, rest, _ := strings.Cut(text, " ")
	rest = strings.TrimSpace(rest)
	var err error
	switch word {
	case "":
		return
	case "/steer":
		if rest == "" {
			err = errors.New("/steer needs the text to steer with")
			break
		}
		var via bridge.SteerVia
		if via, err = c.sess.Steer(ctx, rest, bridge.SteerQueue); err == nil && via == bridge.SteerQueue && !c.events {
			fmt.Fprintln(os.Stderr, "acprun: no turn to steer into (or no way to): queued as the next prompt")
		}
	case "/queue":
		c.showQueue()
	case "/cancel":
		c.sess.Cancel()
	case "/clear":
		c.sess.ClearQueue()
	case "/resume":
		err = c.sess.ResumeQueue()
	default:
		_, err = c.sess.Enqueue(ctx, acpclient.TextBlock(text))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "acprun: %s: %s\n", word, oneLine(err.Error()))
	}
}

// showQueue lists the queue: on stdout, or on stderr when stdout carries
// events.
func (c *chat) showQueue() {
	w := c.out
	if c.events {
		w = os.Stderr
	}
	prompts, paused := c.sess.Queue()
	state := ""
	if paused {
		state = ", paused (/resume runs it)"
	}
	fmt.Fprintf(w, "queue: %d waiting%s\n", len(prompts), state)
	for i, p := range prompts {
		fmt.Fprintf(w, "  %d. %s  %s\n", i+1, p.ID, oneLine(p.Text))
	}
}
