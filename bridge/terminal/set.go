package terminal

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/acphost/acphost/acpclient"
)

// errClosed refuses terminals once the set is closed (with its bridge).
var errClosed = errors.New("bridge: closed")

// replayBytes is how much output goes out again, for the row, when a tool
// call first names a terminal whose output went out before: the most a
// tool row shows (64 KiB, the end of the output a bridge.ToolRow keeps).
const replayBytes = 64 << 10

// Owner is the side of a terminal that is not the command: the session
// (and agent process) it runs for, where its events go and which row
// shows it. A Set calls it from the terminal's goroutines. Owners are
// compared with ==: a terminal answers only the owner that created it, so
// an Owner must be comparable.
type Owner interface {
	// Refuse says why a terminal may not start now (its session closing,
	// its agent process gone), or nil.
	Refuse() error
	// Printed is called when the command first prints: the turn has done
	// work.
	Printed()
	// Row is the tool call whose row shows terminal id, or "" while no
	// tool call has named it.
	Row(id string) string
	// Emit sends a terminal event.
	Emit(out *Output)
	// AfterFunc calls f after d (the owner's clock); stop cancels it.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// Set is the terminals an agent runs through terminal/*, by id, and owns
// their goroutines; a bridge has one. Its zero value is ready. A terminal
// ends with its command, when released, with what End selects (its
// session, its agent process) and with Close.
type Set struct {
	mu     sync.Mutex
	seq    int
	byID   map[string]*terminal
	closed bool
	// running counts the goroutines of terminals and of waiting
	// wait_for_exit requests, released terminals included.
	running sync.WaitGroup
	// sftp is the SFTP client SSH terminals resolve directories with.
	sftp sftpSessions
}

// terminal is one command the agent asked for.
type terminal struct {
	id    string
	owner Owner // its session and agent process
	proc  Process
	out   *outputWindow

	wake chan struct{} // new output for the live events; holds one

	// mu orders the terminal's events: the stream's and place's.
	mu       sync.Mutex
	sent     int64 // output offset the events have reached
	unplaced bool  // an event went out before a tool call named the terminal
	exitSent bool  // the exit event went out: the stream is over

	status      *acpclient.TerminalExitStatus
	uncontained string        // see Output.Uncontained
	ended       chan struct{} // closed once the command ended and status is set
	done        chan struct{} // closed once its goroutines have returned
}

// add registers a started command and starts reading it. A command that
// comes too late (its owner refusing, the set closed) is ended instead:
// nothing would end it later.
func (set *Set) add(owner Owner, proc Process, limit int) (string, error) {
	set.mu.Lock()
	err := owner.Refuse()
	if set.closed {
		err = errClosed
	}
	if err != nil {
		set.mu.Unlock()
		proc.Close() // may wait on a remote host: not under the lock
		return "", err
	}
	defer set.mu.Unlock()
	if set.byID == nil {
		set.byID = map[string]*terminal{}
	}
	set.seq++
	t := &terminal{id: fmt.Sprintf("term-%d", set.seq), owner: owner, proc: proc,
		out: newOutputWindow(limit), wake: make(chan struct{}, 1), ended: make(chan struct{}), done: make(chan struct{})}
	set.byID[t.id] = t
	set.running.Add(2)
	go t.read(&set.running)
	go t.stream(&set.running)
	return t.id, nil
}

// lookup finds the terminal a request of owner names: an agent process
// sees only its own terminals, in the session that runs them.
func (set *Set) lookup(owner Owner, req *acpclient.TerminalRequest) (*terminal, error) {
	set.mu.Lock()
	t := set.byID[req.TerminalID]
	set.mu.Unlock()
	if t == nil || t.owner != owner {
		return nil, acpclient.NewError(acpclient.CodeInvalidParams, "terminal %q of session %q is unknown or was released", req.TerminalID, req.SessionID)
	}
	return t, nil
}

// Go runs f in a goroutine of the set, unless the set is closed: work for
// the agent that must not hold up its connection (starting a command on an
// SSH host takes round trips). Close waits for it.
func (set *Set) Go(f func()) error {
	set.mu.Lock()
	defer set.mu.Unlock()
	if set.closed {
		return errClosed
	}
	set.running.Add(1)
	go func() {
		defer set.running.Done()
		f()
	}()
	return nil
}

// remove forgets t; its goroutines end with its command.
func (set *Set) remove(t *terminal) {
	set.mu.Lock()
	defer set.mu.Unlock()
	if set.byID[t.id] == t {
		delete(set.byID, t.id)
	}
}

// End ends and forgets the terminals whose owner match selects (a closing
// session's, an exited agent process's), and returns once their commands
// are gone and their last events sent.
func (set *Set) End(match func(Owner) bool) {
	set.end(func(t *terminal) bool { return match(t.owner) })
}

func (set *Set) end(match func(*terminal) bool) {
	set.mu.Lock()
	var ending []*terminal
	for id, t := range set.byID {
		if match(t) {
			ending = append(ending, t)
			delete(set.byID, id)
		}
	}
	set.mu.Unlock()
	for _, t := range ending {
		t.proc.Kill()
	}
	for _, t := range ending {
		<-t.done
	}
}

// Placed tells terminal id, if match selects its owner, that a tool call
// now names it (Owner.Row has the row): output that went out before any
// row could show it is sent again for the row.
func (set *Set) Placed(match func(Owner) bool, id string) {
	set.mu.Lock()
	t := set.byID[id]
	set.mu.Unlock()
	if t != nil && match(t.owner) {
		t.place()
	}
}

// Close ends every terminal and refuses new ones, and waits for every
// goroutine of the set, those of released terminals too.
func (set *Set) Close() {
	set.mu.Lock()
	set.closed = true
	set.mu.Unlock()
	set.end(func(*terminal) bool { return true })
	set.running.Wait()
	set.sftp.close()
}

// read copies the command's output into the window until it ends, then
// reaps it and records how it ended.
func (t *terminal) read(running *sync.WaitGroup) {
	defer running.Done()
	buf := make([]byte, 32<<10)
	printed := false
	for {
		n, err := t.proc.Read(buf)
		if n > 0 {
			if !printed {
				// Work done: a failed turn must not be sent again whole.
				t.owner.Printed()
				printed = true
			}
			t.out.write(buf[:n])
			select {
			case t.wake <- struct{}{}:
			default: // the live events are behind; they take it all at once
			}
		}
		if err != nil {
			break
		}
	}
	t.status = t.proc.Wait()
	if u, ok := t.proc.(interface{ Uncontained() string }); ok {
		t.uncontained = u.Uncontained()
	}
	t.proc.Close()
	close(t.ended)
}

// stream emits the output as terminal events while the command runs, then
// the rest and its exit. An event goes out as soon as output arrives, and
// then at most one per liveInterval, carrying what arrived since
// the last one, at most livePiece bytes (the newest): however fast
// the command prints and however slow the consumer, the live view costs
// little, and memory stays within the window.
func (t *terminal) stream(running *sync.WaitGroup) {
	defer running.Done()
	defer close(t.done)
	for {
		final := false
		select {
		case <-t.wake:
		case <-t.ended:
			final = true
		}
		t.mu.Lock()
		t.emitNew(final)
		t.mu.Unlock()
		if final {
			return
		}
		t.pause()
	}
}

// emitNew emits the output not sent yet, and the exit if final; or, when
// earlier events went out before a tool call named the terminal and one
// now does, everything so far again for that row (see emitPlaced).
// Called with t.mu held.
func (t *terminal) emitNew(final bool) {
	tool := t.toolCall()
	if t.unplaced && tool != "" {
		t.emitPlaced(tool, final)
		return
	}
	data, next, skipped := t.out.since(t.sent, livePiece, final)
	t.sent = next
	if data != "" || skipped {
		t.emit(&Output{ToolCallID: tool, Data: data, Truncated: skipped})
	}
	if final {
		t.emit(&Output{ToolCallID: tool, Exit: t.status, Uncontained: t.uncontained})
		t.exitSent = true
	}
}

// emitPlaced emits, for the row of tool call tool, the output kept so far
// (its newest replayBytes, Reset: it replaces what was shown)
// and the exit if the command has ended: the first pieces went out before
// the agent's tool update named the terminal, so no row could show them.
// Called with t.mu held.
func (t *terminal) emitPlaced(tool string, final bool) {
	ended := final || t.exitSent
	data, next, skipped := t.out.since(0, replayBytes, ended)
	t.sent, t.unplaced = next, false
	out := &Output{ToolCallID: tool, Data: data, Truncated: skipped, Reset: true}
	if ended {
		out.Exit, out.Uncontained, t.exitSent = t.status, t.uncontained, true
	}
	t.emit(out)
}

// place is called when a tool update names the terminal in its content:
// output that went out unnamed is emitted again for the row, by the
// stream while the command runs, here once its events are over.
func (t *terminal) place() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.unplaced {
		return
	}
	if !t.exitSent {
		select {
		case t.wake <- struct{}{}:
		default: // the stream is awake already
		}
		return
	}
	if tool := t.toolCall(); tool != "" {
		t.emitPlaced(tool, true)
	}
}

// pause waits liveInterval, or less if the command ends.
func (t *terminal) pause() {
	tick := make(chan struct{})
	stop := t.owner.AfterFunc(liveInterval, func() { close(tick) })
	defer stop()
	select {
	case <-tick:
	case <-t.ended:
	}
}

// toolCall is the row that shows the terminal: the tool call that named
// it, or "" while none has.
func (t *terminal) toolCall() string { return t.owner.Row(t.id) }

func (t *terminal) emit(out *Output) {
	out.ID, out.Source = t.id, "client"
	if out.ToolCallID == "" {
		t.unplaced = true
	}
	t.owner.Emit(out)
}

// exitStatus is how the command ended, or nil while it runs.
func (t *terminal) exitStatus() *acpclient.TerminalExitStatus {
	select {
	case <-t.ended:
		return t.status
	default:
		return nil
	}
}
