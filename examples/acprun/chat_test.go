package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/waitfor"
)

// chatProc is a running "acprun chat --events": lines go to its stdin,
// its events are read from stdout as they come.
type chatProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	events chan bridge.Event // closed at the end of stdout
	seen   []bridge.Event
	stderr *lockedBuffer
}

// lockedBuffer is a bytes.Buffer safe for the process's writes and the
// test's reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// chatAgent writes script for the fake agent binary and returns the
// --agent value that runs it.
func chatAgent(t *testing.T, script acptest.Script) string {
	t.Helper()
	return fmt.Sprintf("'%s' -script '%s'", acptest.BuildBinary(t), acptest.WriteScript(t, script))
}

// startChat starts acprun chat --events with args, HOME home and a
// minimal environment.
func startChat(t *testing.T, home string, args ...string) *chatProc {
	t.Helper()
	cmd := exec.Command(acprunBinary, append([]string{"chat", "--events"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "NO_COLOR=1", "HOME=" + home, "XDG_DATA_HOME=" + filepath.Join(home, "data")}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &chatProc{t: t, cmd: cmd, stdin: stdin, events: make(chan bridge.Event, 1024), stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	go func() {
		defer close(p.events)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev bridge.Event
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				ev = bridge.Event{Kind: "unparsed", Text: sc.Text()}
			}
			p.events <- ev
		}
	}()
	return p
}

// send writes one line to the chat's stdin.
func (p *chatProc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("writing %q to acprun chat: %v", line, err)
	}
}

// waitFor reads events until one matches, and returns it.
func (p *chatProc) waitFor(desc string, match func(bridge.Event) bool) bridge.Event {
	p.t.Helper()
	for _, ev := range p.seen {
		if match(ev) {
			return ev
		}
	}
	for {
		ev, ok := <-waitForEvent(p.t, p.events, desc)
		if !ok {
			p.t.Fatalf("acprun chat ended before %s; stderr:\n%s", desc, p.stderr.String())
		}
		p.seen = append(p.seen, ev)
		if match(ev) {
			return ev
		}
	}
}

// waitForEvent hands on the next event (or the end of the stream) within
// waitfor's bound.
func waitForEvent(t *testing.T, events <-chan bridge.Event, desc string) <-chan bridge.Event {
	t.Helper()
	type next struct {
		ev bridge.Event
		ok bool
	}
	got := make(chan next, 1)
	go func() { ev, ok := <-events; got <- next{ev, ok} }()
	n := waitfor.Recv(t, got, "acprun chat: "+desc)
	out := make(chan bridge.Event, 1)
	if n.ok {
		out <- n.ev
	}
	close(out)
	return out
}

// end closes stdin, reads the remaining events and returns the exit
// status.
func (p *chatProc) end() int {
	p.t.Helper()
	p.stdin.Close()
	for ev := range p.events {
		p.seen = append(p.seen, ev)
	}
	err := p.cmd.Wait()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode()
	case err != nil:
		p.t.Fatalf("acprun chat: %v", err)
	}
	return 0
}

func isTurnEnd(turn uint64) func(bridge.Event) bool {
	return func(ev bridge.Event) bool { return ev.Kind == bridge.KindTurnEnd && ev.Turn == turn }
}

// isQueuedLine matches the queue event of text being queued.
func isQueuedLine(text string) func(bridge.Event) bool {
	return func(ev bridge.Event) bool {
		if !isQueue("queued")(ev) {
			return false
		}
		for _, q := range ev.Queue.Prompts {
			if q.ID == ev.Queue.ID && q.Text == text {
				return true
			}
		}
		return false
	}
}

func isQueue(change string) func(bridge.Event) bool {
	return func(ev bridge.Event) bool {
		return ev.Kind == bridge.KindQueue && ev.Queue != nil && ev.Queue.Change == change
	}
}

// prompts lists the prompts of the turns seen, in order.
func (p *chatProc) prompts() []string {
	var out []string
	for _, ev := range p.seen {
		if ev.Kind == bridge.KindTurnStart {
			out = append(out, ev.Text)
		}
	}
	return out
}

// A conversation: a line typed while a turn runs is queued (a queue
// event), /queue lists it, /steer puts text into the running turn through
// the agent's _session/steering (a user_text event marked steer, in the
// turn, before what the agent says after taking it), and the queued line
// runs as the next turn; at the end of stdin acprun exits 0.
func TestChatQueuesAndSteers(t *testing.T) {
	t.Parallel()
	agent := chatAgent(t, acptest.Script{
		Steering: acptest.SteeringScript{Wire: acptest.SteerWireExtension},
		Prompts: []acptest.Turn{
			{Match: "work", Steps: []acptest.Step{{Text: "working"}, {WaitSteer: true}, {Text: "done"}}},
			{Steps: []acptest.Step{{Text: "reply"}}},
		},
	})
	p := startChat(t, t.TempDir(), "--agent", agent, "--cwd", t.TempDir())
	p.send("work on it")
	p.waitFor("the first turn's output", func(ev bridge.Event) bool { return ev.Kind == bridge.KindText && ev.Text == "working" })
	p.send("and then this")
	queued := p.waitFor("the line queued", isQueuedLine("and then this"))
	if len(queued.Queue.Prompts) != 1 || queued.Turn != 1 {
		t.Fatalf("queued event in turn %d lists %+v, want the line alone, in turn 1", queued.Turn, queued.Queue.Prompts)
	}
	p.send("/queue")
	p.send("/steer use the v2 API")
	steered := p.waitFor("the steered text", func(ev bridge.Event) bool { return ev.Kind == bridge.KindUserText && ev.Steer != "" })
	if steered.Text != "use the v2 API" || steered.Steer != bridge.SteerExtension || steered.Turn != 1 {
		t.Errorf("steered event %q by %q in turn %d, want the text by extension in turn 1", steered.Text, steered.Steer, steered.Turn)
	}
	p.waitFor("the queued line's turn to end", isTurnEnd(2))
	if code := p.end(); code != exitOK {
		t.Fatalf("exit status %d; stderr:\n%s", code, p.stderr.String())
	}
	if got := p.prompts(); !slices.Equal(got, []string{"work on it", "and then this"}) {
		t.Errorf("turns %q, want the two lines in order", got)
	}
	var turn1 []string
	for _, ev := range p.seen {
		if ev.Turn == 1 && (ev.Kind == bridge.KindText || ev.Kind == bridge.KindUserText) {
			turn1 = append(turn1, string(ev.Kind)+":"+ev.Text)
		}
	}
	want := []string{"text:working", "text:steered: use the v2 API", "user_text:use the v2 API", "text:done"}
	if !slices.Equal(turn1, want) {
		t.Errorf("turn 1 %q, want %q", turn1, want)
	}
	if list := p.stderr.String(); !strings.Contains(list, "queue: 1 waiting") || !strings.Contains(list, "and then this") {
		t.Errorf("/queue listed on stderr:\n%s", list)
	}
}

// An agent with no way to steer: /steer queues the text as the next
// prompt, /cancel ends the turn (the queue goes on), and the text runs.
func TestChatSteerWithoutAWayQueues(t *testing.T) {
	t.Parallel()
	agent := chatAgent(t, acptest.Script{Prompts: []acptest.Turn{
		{Match: "hold", Steps: []acptest.Step{{Text: "holding"}, {WaitCancel: true}}},
	}})
	p := startChat(t, t.TempDir(), "--agent", agent, "--cwd", t.TempDir())
	p.send("hold on")
	p.waitFor("the turn's output", func(ev bridge.Event) bool { return ev.Kind == bridge.KindText && ev.Text == "holding" })
	p.send("/steer try the other file")
	queued := p.waitFor("the steer queued", isQueuedLine("try the other file"))
	if len(queued.Queue.Prompts) != 1 {
		t.Fatalf("queued %+v, want the steered text alone", queued.Queue.Prompts)
	}
	p.send("/cancel")
	p.waitFor("the steered text's turn to end", isTurnEnd(2))
	if code := p.end(); code != exitOK {
		t.Fatalf("exit status %d; stderr:\n%s", code, p.stderr.String())
	}
	if got := p.prompts(); !slices.Equal(got, []string{"hold on", "try the other file"}) {
		t.Errorf("turns %q", got)
	}
}

// acprun killed with three prompts queued: the journal has them, and a
// chat resuming the session gets its queue back, paused, running nothing
// until /resume; then the three run in order. A turn that fails pauses the
// queue, and a chat that ends so exits 1 saying so.
func TestChatKilledWithThreeQueuedPrompts(t *testing.T) {
	t.Parallel()
	home, cwd := t.TempDir(), t.TempDir()
	agent := chatAgent(t, acptest.Script{
		NewSession:  acptest.NewSessionScript{SessionIDs: []string{"sess_K"}},
		LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_K"}},
		Prompts: []acptest.Turn{
			{Match: "hold", Steps: []acptest.Step{{Text: "holding"}, {WaitCancel: true}}},
			{Match: "fail", Steps: []acptest.Step{{Text: "failing"}}, Error: &acptest.Error{Code: -32603, Message: "overloaded"}},
			{Steps: []acptest.Step{{Text: "ok"}}},
		},
	})
	p := startChat(t, home, "--agent", agent, "--cwd", cwd)
	p.send("hold on")
	p.waitFor("the turn's output", func(ev bridge.Event) bool { return ev.Kind == bridge.KindText && ev.Text == "holding" })
	for _, line := range []string{"one", "two", "three"} {
		p.send(line)
	}
	last := p.waitFor("three prompts queued", func(ev bridge.Event) bool {
		return ev.Kind == bridge.KindQueue && len(ev.Queue.Prompts) == 3
	})
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()

	r := startChat(t, home, "--agent", agent, "--cwd", cwd, "--resume", last.Key)
	restored := r.waitFor("the restored queue", isQueue("restored"))
	var texts []string
	for _, q := range restored.Queue.Prompts {
		texts = append(texts, q.Text)
	}
	if !slices.Equal(texts, []string{"one", "two", "three"}) || !restored.Queue.Paused {
		t.Fatalf("restored queue %q, paused %v; want one, two, three, paused", texts, restored.Queue.Paused)
	}
	r.send("/queue")
	r.send("fail now") // queued behind the paused three: nothing runs yet
	r.waitFor("the new line queued", isQueuedLine("fail now"))
	for _, ev := range r.seen {
		if ev.Kind == bridge.KindTurnStart {
			t.Fatalf("a turn ran before /resume: %q", ev.Text)
		}
	}
	r.send("/resume")
	r.waitFor("the last prompt's turn", func(ev bridge.Event) bool { return ev.Kind == bridge.KindTurnEnd && ev.Err != nil })
	if got := r.prompts(); !slices.Equal(got, []string{"one", "two", "three", "fail now"}) {
		t.Errorf("turns after /resume %q, want one, two, three, fail now", got)
	}
	if code := r.end(); code != exitFailed || !strings.Contains(r.stderr.String(), "did not end with end_turn") {
		t.Errorf("exit status %d, stderr:\n%s\nwant 1 naming the failed turn", code, r.stderr.String())
	}
	if list := r.stderr.String(); !strings.Contains(list, "queue: 3 waiting, paused") {
		t.Errorf("/queue after the restart:\n%s", list)
	}
}

// A failed turn pauses the queue: the chat ends with the prompts left and
// says how to run them.
func TestChatPausedQueueExitsSayingSo(t *testing.T) {
	t.Parallel()
	agent := chatAgent(t, acptest.Script{Prompts: []acptest.Turn{
		{Match: "fail", Steps: []acptest.Step{{Text: "failing"}, {WaitCancel: true}}, IgnoreCancel: true,
			Error: &acptest.Error{Code: -32603, Message: "overloaded"}},
	}})
	p := startChat(t, t.TempDir(), "--agent", agent, "--cwd", t.TempDir())
	p.send("fail please")
	p.waitFor("the turn's output", func(ev bridge.Event) bool { return ev.Kind == bridge.KindText && ev.Text == "failing" })
	p.send("next")
	p.waitFor("the line queued", isQueuedLine("next"))
	p.send("/cancel")
	paused := p.waitFor("the queue paused", isQueue("paused"))
	if !strings.Contains(paused.Queue.Reason, "overloaded") {
		t.Errorf("paused because %q, want the turn's failure", paused.Queue.Reason)
	}
	if code := p.end(); code != exitFailed || !strings.Contains(p.stderr.String(), "queue paused with 1 prompts left") {
		t.Errorf("exit status %d, stderr:\n%s", code, p.stderr.String())
	}
	if got := p.prompts(); !slices.Equal(got, []string{"fail please"}) {
		t.Errorf("turns %q, want only the failed one", got)
	}
}
