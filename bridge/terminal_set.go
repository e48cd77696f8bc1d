package bridge

import (
	"fmt"
	"sync"

	"github.com/acphost/acphost/acpclient"
)

// terminalSet holds a bridge's terminals, by id, and owns their goroutines.
// Its zero value is ready. A terminal ends with its command, when released,
// and with its session, its agent process and its bridge (end*).
type terminalSet struct {
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
	id      string
	session *Session
	owner   *agentClient // the process that created it
	proc    TerminalProcess
	out     *outputWindow

	wake chan struct{} // new output for the live events; holds one

	// mu orders the terminal's events: the stream's and place's.
	mu       sync.Mutex
	sent     int64 // output offset the events have reached
	unplaced bool  // an event went out before a tool call named the terminal
	exitSent bool  // the exit event went out: the stream is over

	status      *acpclient.TerminalExitStatus
	uncontained string        // see TerminalOutput.Uncontained
	ended       chan struct{} // closed once the command ended and status is set
	done        chan struct{} // closed once its goroutines have returned
}

// add registers a started command and starts reading it. A command that
// comes too late (its session closing, its process or the bridge gone) is
// ended instead: nothing would end it later.
func (set *terminalSet) add(s *Session, owner *agentClient, proc TerminalProcess, limit int) (string, error) {
	set.mu.Lock()
	err := s.closedErr()
	switch {
	case set.closed:
		err = ErrClosed
	case err == nil && owner.conn != nil && owner.conn.Err() != nil:
		err = errAgentExited
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
	t := &terminal{id: fmt.Sprintf("term-%d", set.seq), session: s, owner: owner, proc: proc,
		out: newOutputWindow(limit), wake: make(chan struct{}, 1), ended: make(chan struct{}), done: make(chan struct{})}
	set.byID[t.id] = t
	set.running.Add(2)
	go t.read(&set.running)
	go t.stream(&set.running)
	return t.id, nil
}

// lookup finds the terminal a request of the agent process owner names,
// in the session it names: a process sees only its own terminals.
func (set *terminalSet) lookup(owner *agentClient, req *acpclient.TerminalRequest) (*terminal, error) {
	set.mu.Lock()
	t := set.byID[req.TerminalID]
	set.mu.Unlock()
	if t == nil || t.owner != owner || t.session != owner.b.session(req.SessionID) {
		return nil, acpclient.NewError(acpclient.CodeInvalidParams, "terminal %q of session %q is unknown or was released", req.TerminalID, req.SessionID)
	}
	return t, nil
}

// goWait runs wait in a goroutine of the set, unless the set is closed.
func (set *terminalSet) goWait(wait func()) error {
	set.mu.Lock()
	defer set.mu.Unlock()
	if set.closed {
		return ErrClosed
	}
	set.running.Add(1)
	go func() {
		defer set.running.Done()
		wait()
	}()
	return nil
}

// remove forgets t; its goroutines end with its command.
func (set *terminalSet) remove(t *terminal) {
	set.mu.Lock()
	defer set.mu.Unlock()
	if set.byID[t.id] == t {
		delete(set.byID, t.id)
	}
}

// end ends and forgets the terminals match selects, and returns once
// their commands are gone and their last events queued.
func (set *terminalSet) end(match func(*terminal) bool) {
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

// placed tells the session's terminal id that a tool call's content
// names it (see terminal.place).
func (set *terminalSet) placed(s *Session, id string) {
	set.mu.Lock()
	t := set.byID[id]
	set.mu.Unlock()
	if t != nil && t.session == s {
		t.place()
	}
}

// endSession ends a closing session's terminals.
func (set *terminalSet) endSession(s *Session) {
	set.end(func(t *terminal) bool { return t.session == s })
}

// endConn ends the terminals of an agent process that has exited.
func (set *terminalSet) endConn(conn *acpclient.Conn) {
	set.end(func(t *terminal) bool { return t.owner.conn == conn })
}

// endAll ends every terminal and refuses new ones, and waits for every
// goroutine of the set, those of released terminals too.
func (set *terminalSet) endAll() {
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
				t.session.turnOutput()
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
// then at most one per liveTerminalInterval, carrying what arrived since
// the last one, at most liveTerminalPiece bytes (the newest): however fast
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
	data, next, skipped := t.out.since(t.sent, liveTerminalPiece, final)
	t.sent = next
	if data != "" || skipped {
		t.emit(&TerminalOutput{ToolCallID: tool, Data: data, Truncated: skipped})
	}
	if final {
		t.emit(&TerminalOutput{ToolCallID: tool, Exit: t.status, Uncontained: t.uncontained})
		t.exitSent = true
	}
}

// emitPlaced emits, for the row of tool call tool, the output kept so far
// (its newest ToolRowOutputLimit bytes, Reset: it replaces what was shown)
// and the exit if the command has ended: the first pieces went out before
// the agent's tool update named the terminal, so no row could show them.
// Called with t.mu held.
func (t *terminal) emitPlaced(tool string, final bool) {
	ended := final || t.exitSent
	data, next, skipped := t.out.since(0, ToolRowOutputLimit, ended)
	t.sent, t.unplaced = next, false
	out := &TerminalOutput{ToolCallID: tool, Data: data, Truncated: skipped, Reset: true}
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

// pause waits liveTerminalInterval, or less if the command ends.
func (t *terminal) pause() {
	tick := make(chan struct{})
	timer := t.session.b.clock.AfterFunc(liveTerminalInterval, func() { close(tick) })
	defer timer.Stop()
	select {
	case <-tick:
	case <-t.ended:
	}
}

// toolCall is the row that shows the terminal: the tool call whose content
// named it, or "" while none has.
func (t *terminal) toolCall() string {
	t.session.mu.Lock()
	defer t.session.mu.Unlock()
	return t.session.tools.terms.toolCallOf(t.id)
}

func (t *terminal) emit(out *TerminalOutput) {
	out.ID, out.Source = t.id, "client"
	if out.ToolCallID == "" {
		t.unplaced = true
	}
	t.session.activity() // a command's output is the agent's turn at work
	t.session.emit(Event{Kind: KindTerminal, Terminal: out})
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
