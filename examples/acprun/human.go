package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
)

// output shows the event stream: as text for a person (human) or as JSON
// lines for a program (jsonOutput). Its methods are called from the one
// goroutine that reads the host's events, in order.
type output interface {
	// event shows one event.
	event(ev bridge.Event)
	// permission shows a permission request; decide answers it and says how.
	permission(ev bridge.Event, decide func() string)
	// finish ends the output once the stream is closed.
	finish()
}

// spinnerFrames are drawn in turn while the agent is silent.
var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// spinnerDelay is how long the agent must be silent before the spinner shows.
const spinnerDelay = 250 * time.Millisecond

// human writes the stream for a person: the reply as it streams, reasoning
// dimmed, one line per tool call (rewritten in place on a terminal), the
// plan, permission questions and their answers, and usage at the end.
type human struct {
	out    io.Writer
	diag   io.Writer // stderr
	tty    bool
	colors palette

	mu          sync.Mutex
	atLineStart bool
	block       string              // what the current line holds: "text", "thinking", "line"
	liveLine    string              // key of the last line, rewritable in place ("tool:ID", "plan"); "" if none
	liveExtra   int                 // lines the live block spans below its first (a command's output)
	toolLines   map[string]string   // each tool row's line, by row key
	tails       map[string]*cmdTail // the output of each row's running command
	toolStatus  map[string]string
	usage       *bridge.Usage
	session     string
	key         string // the session's host key, for the resume hint
	resumable   bool   // the agent can load or resume sessions: the hint says --resume
	messageID   string // of the last text or thinking piece, to tell messages apart
	history     bool   // showing a journaled session, not a live turn
	echo        bool   // show each turn's prompt, as a conversation (chat) does
	pendingErr  string // an error event not yet shown: dropped if the turn ends with it

	// The spinner, drawn after the last output on a terminal.
	spinning  bool // a turn runs and nobody is being asked anything
	drawn     bool
	frame     int
	lastWrite time.Time
	stop      chan struct{}
	stopped   sync.WaitGroup
}

func newHuman(out, diag io.Writer, tty bool, colors palette) *human {
	h := &human{out: out, diag: diag, tty: tty, colors: colors, atLineStart: true, toolStatus: map[string]string{},
		toolLines: map[string]string{}, tails: map[string]*cmdTail{}, stop: make(chan struct{})}
	if tty {
		h.stopped.Add(1)
		go h.spin()
	}
	return h
}

// spin draws the spinner while the agent is silent; finish stops it.
func (h *human) spin() {
	defer h.stopped.Done()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-tick.C:
		}
		h.mu.Lock()
		if h.spinning && time.Since(h.lastWrite) >= spinnerDelay {
			if h.drawn {
				io.WriteString(h.out, "\b")
			}
			io.WriteString(h.out, h.colors.cyan(spinnerFrames[h.frame%len(spinnerFrames)]))
			h.frame++
			h.drawn = true
		}
		h.mu.Unlock()
	}
}

// write writes s after erasing the spinner. h.mu is held.
func (h *human) write(s string) {
	if s == "" {
		return
	}
	if h.drawn {
		io.WriteString(h.out, "\b \b")
		h.drawn = false
	}
	io.WriteString(h.out, s)
	h.lastWrite = time.Now()
	h.atLineStart = strings.HasSuffix(s, "\n")
}

// newline ends the current line unless it is empty. h.mu is held.
func (h *human) newline() {
	if !h.atLineStart {
		h.write("\n")
	}
	h.liveLine, h.liveExtra = "", 0
}

// line shows a status line under key: on a terminal a line with the same
// key that is still the last one is rewritten in place, with the lines
// below it that s may add (a command's output). h.mu is held.
func (h *human) line(key, s string) {
	if h.tty && key != "" && h.liveLine == key {
		up := ""
		if h.liveExtra > 0 {
			up = fmt.Sprintf("\x1b[%dA", h.liveExtra)
		}
		h.write("\r" + up + "\x1b[J" + s)
	} else {
		h.newline()
		h.write(s)
	}
	h.block, h.liveLine, h.liveExtra = "line", key, strings.Count(s, "\n")
	if !h.tty {
		h.newline()
	}
}

func (h *human) event(ev bridge.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ev.Session != "" {
		h.session = ev.Session
	}
	if ev.Key != "" {
		h.key = ev.Key
	}
	if ev.Replay {
		return // history of a resumed session: not this run's output
	}
	if h.pendingErr != "" && ev.Kind != bridge.KindTurnEnd {
		h.showError(h.pendingErr)
	}
	switch ev.Kind {
	case bridge.KindTurnStart:
		h.spinning = !h.history
		if h.history || h.echo {
			h.newline()
			h.write(h.colors.bold("> "+ev.Text) + "\n")
			h.block = ""
		}
	case bridge.KindPermission:
		// Live requests go to permission; this is one from the journal.
		h.newline()
		h.write(h.colors.yellow("⚠ ") + "permission requested: " + h.colors.bold(toolTitle(ev.Tool)) + "\n")
	case bridge.KindDecision:
		// acprun shows its own answers as it gives them; the rest (the
		// policy's, the host's) and all of a history are shown here.
		if d := ev.Decision; d != nil && (h.history || d.By != "app") {
			h.decision(d)
		}
	case bridge.KindText:
		h.text(ev)
	case bridge.KindThinking:
		h.thinking(ev)
	case bridge.KindToolStart, bridge.KindToolUpdate, bridge.KindToolEnd:
		h.tool(ev)
	case bridge.KindTerminal:
		h.terminal(ev)
	case bridge.KindPlan, bridge.KindTodos:
		h.plan(ev.Plan)
	case bridge.KindUsage:
		if ev.Usage != nil {
			u := *ev.Usage
			if u.Turn == nil && h.usage != nil {
				u.Turn = h.usage.Turn
			}
			h.usage = &u
		}
	case bridge.KindCompaction:
		if c := ev.Compaction; c != nil {
			h.line("compaction", h.colors.dim("context compaction: "+c.Status+suffix(": ", c.Message)))
		}
	case bridge.KindAgentMode:
		h.line("", h.colors.dim("agent mode: "+ev.AgentMode))
	case bridge.KindNotice:
		h.line("", h.colors.yellow("note: ")+ev.Text)
	case bridge.KindQueue:
		if q := ev.Queue; q != nil {
			h.line("", h.colors.dim(fmt.Sprintf("queue: %s%s, %d waiting%s", q.Change, suffix(" ", q.ID), len(q.Prompts), suffix(": ", q.Reason))))
		}
	case bridge.KindUserText:
		if ev.Steer != "" {
			h.line("", h.colors.bold("» ")+ev.Text+h.colors.dim(" (steered into turn "+strconv.FormatUint(ev.Turn, 10)+")"))
		}
	case bridge.KindSession:
		if r := ev.SessionReady; r != nil {
			switch {
			case r.Fork != nil && !r.Resumed:
				// In a fork's history: where the parent's part ends.
				h.line("", h.colors.dim(fmt.Sprintf("— forked from session %s after turn %d —", r.Fork.Parent, r.Fork.AfterTurn)))
			case r.Resumed:
				fmt.Fprintf(h.diag, "acprun: resumed session %s\n", ev.Session)
			case r.ResumeError != "":
				fmt.Fprintf(h.diag, "acprun: could not resume the session (%s); started %s\n", oneLine(r.ResumeError), ev.Session)
			}
		}
	case bridge.KindAuthority:
		if a := ev.Authority; a != nil {
			fmt.Fprintf(h.diag, "acprun: session %s: authority %s\n", ev.Session, authorityLine(a))
		}
	case bridge.KindAuthRequired:
		if ev.Auth != nil {
			fmt.Fprintf(h.diag, "acprun: %s asks to sign in (%s)\n", ev.Bridge, methodList(ev.Auth.Methods))
		}
	case bridge.KindError:
		if ev.Err != nil {
			h.pendingErr = oneLine(ev.Err.Error())
		}
	case bridge.KindTurnEnd:
		h.spinning = false
		if h.pendingErr != "" && ev.Err != nil && oneLine(ev.Err.Error()) == h.pendingErr {
			h.pendingErr = "" // the exit reason reports it
		}
		h.newline()
		h.block = ""
	}
}

// showError shows an error that did not end the turn. h.mu is held.
func (h *human) showError(msg string) {
	h.pendingErr = ""
	h.newline()
	fmt.Fprintf(h.diag, "%s %s\n", h.colors.red("error:"), msg)
}

func (h *human) tool(ev bridge.Event) {
	t := ev.Tool
	if t == nil {
		return
	}
	status := t.Status
	if status == "" {
		status = acpclient.ToolStatusPending
	}
	// Without a terminal a line is printed when a tool starts and whenever
	// its status changes; on a terminal the line is kept up to date.
	// Agents reuse tool ids across turns: a row is a turn's.
	row := toolRow(ev.Turn, t.ID)
	h.toolLines[row] = h.toolLine(t, status)
	if !h.tty && ev.Kind != bridge.KindToolStart && h.toolStatus[row] == status {
		return
	}
	h.toolStatus[row] = status
	h.line(row, h.toolLines[row]+h.tailBlock(row))
	if ev.Kind == bridge.KindToolEnd {
		delete(h.tails, row) // its last lines stay on the screen
	}
}

// toolRow is the key of a turn's tool row.
func toolRow(turn uint64, id string) string { return fmt.Sprintf("tool:%d:%s", turn, id) }

func (h *human) toolLine(t *bridge.ToolCall, status string) string {
	var icon string
	switch status {
	case acpclient.ToolStatusCompleted:
		icon = h.colors.green("✓")
	case acpclient.ToolStatusFailed:
		icon = h.colors.red("✗")
	case "cancelled", bridge.ToolUnfinished:
		icon = h.colors.yellow("⊘")
	case acpclient.ToolStatusInProgress:
		icon = h.colors.cyan("▶")
	default:
		icon = h.colors.dim("○")
	}
	s := icon + " " + h.colors.bold(toolTitle(t))
	if t.Kind != "" {
		s += h.colors.dim(" (" + t.Kind + ")")
	}
	return s + " " + h.colors.dim(strings.ReplaceAll(status, "_", " "))
}

func (h *human) plan(entries []acpclient.PlanEntry) {
	if len(entries) == 0 {
		return
	}
	var parts []string
	done := 0
	for _, e := range entries {
		switch e.Status {
		case "completed":
			done++
			parts = append(parts, h.colors.green("✓")+" "+h.colors.dim(e.Content))
		case "in_progress":
			parts = append(parts, h.colors.cyan("▶")+" "+e.Content)
		default:
			parts = append(parts, h.colors.dim("○ "+e.Content))
		}
	}
	h.line("plan", fmt.Sprintf("%s %s  %s", h.colors.bold("plan"), h.colors.dim(fmt.Sprintf("%d/%d", done, len(entries))), strings.Join(parts, h.colors.dim(" · "))))
}

// decision shows how a request was settled, and by whom when it was not
// acprun. h.mu is held.
func (h *human) decision(d *bridge.Decision) {
	var outcome string
	switch d.Outcome {
	case "allowed", "accepted", "signed_in":
		outcome = h.colors.green(d.Outcome)
	case "rejected", "declined":
		outcome = h.colors.red(d.Outcome)
	default:
		outcome = h.colors.yellow(d.Outcome)
	}
	h.newline()
	h.write("  " + outcome + h.colors.dim(suffix(" by ", d.By)+suffix(": ", d.Rule)) + "\n")
	h.block = ""
}

// newHistory returns a human output that shows a journaled session: the
// prompts, replies, tool rows and decisions, without a spinner.
func newHistory(out, diag io.Writer, colors palette) *human {
	return &human{out: out, diag: diag, colors: colors, atLineStart: true, toolStatus: map[string]string{},
		toolLines: map[string]string{}, tails: map[string]*cmdTail{}, stop: make(chan struct{}), history: true}
}

func (h *human) permission(ev bridge.Event, decide func() string) {
	h.mu.Lock()
	h.newline()
	h.write(h.colors.yellow("⚠ ") + "permission requested: " + h.colors.bold(toolTitle(ev.Tool)) + "\n")
	h.spinning = false
	h.mu.Unlock()

	decision := decide()

	h.mu.Lock()
	defer h.mu.Unlock()
	switch decision {
	case decisionAllow:
		h.write("  " + h.colors.green("allowed") + "\n")
	case decisionReject:
		h.write("  " + h.colors.red("rejected") + "\n")
	default:
		h.write("  " + h.colors.yellow("cancelled") + "\n")
	}
	h.block = ""
	h.spinning = true
}

// setResumable says whether the agent can resume sessions, for the hint
// that ends the output.
func (h *human) setResumable(resumable bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.resumable = resumable
}

func (h *human) finish() {
	close(h.stop)
	h.stopped.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.spinning = false
	if h.pendingErr != "" {
		h.showError(h.pendingErr)
	}
	h.newline()
	if u := h.usage; u != nil {
		h.write(h.colors.dim(usageLine(u)) + "\n")
	}
	switch {
	case h.history:
	case h.key != "":
		fmt.Fprintf(h.diag, "%s\n", h.colors.dim(resumeHint(h.key, h.resumable)))
	case h.session != "":
		fmt.Fprintf(h.diag, "%s\n", h.colors.dim(resumeHint(h.session, h.resumable)))
	}
}

// usageLine says how full the context is, what the last turn used and
// what the session cost.
func usageLine(u *bridge.Usage) string {
	var parts []string
	switch {
	case u.Known && u.Size > 0:
		parts = append(parts, fmt.Sprintf("context %s of %s tokens (%.0f%%)", tokens(u.Used), tokens(u.Size), u.Percent))
	case u.Known && u.Percent > 0:
		parts = append(parts, fmt.Sprintf("context %.0f%% full", u.Percent))
	}
	if t := u.Turn; t != nil {
		parts = append(parts, fmt.Sprintf("this turn %s tokens (%s in, %s out)", tokens(t.TotalTokens), tokens(t.InputTokens), tokens(t.OutputTokens)))
	}
	if c := u.Cost; c != nil {
		parts = append(parts, fmt.Sprintf("cost %.4f %s", c.Amount, c.Currency))
	}
	return "usage: " + strings.Join(parts, " · ")
}

// tokens writes a token count briefly: 512, 5.1k, 200k, 1.2M.
func tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "M"
	case n >= 1000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e3), ".0") + "k"
	}
	return fmt.Sprint(n)
}

// toolTitle names a tool call for a person.
func toolTitle(t *bridge.ToolCall) string {
	switch {
	case t == nil:
		return "a tool call"
	case t.Title != "":
		return t.Title
	case t.Name != "":
		return t.Name
	}
	return t.ID
}

func suffix(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}

// oneLine folds a multi-line message (an agent's stderr, say) onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " | ")), " ")
}

// authorityLine says what the session's authority state means: the state,
// why, and whether prompts are refused or wait for consent.
func authorityLine(a *bridge.AuthorityState) string {
	line := string(a.State) + suffix(" (", a.Reason)
	if a.Reason != "" {
		line += ")"
	}
	switch {
	case a.ConsentNeeded:
		line += "; it runs only with your consent"
	case a.Blocked:
		line += "; prompts are refused"
	}
	return line
}
