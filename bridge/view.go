package bridge

import (
	"unicode/utf8"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge/terminal"
)

// SessionView is the state of one session as its events describe it: what
// a UI shows. Apply folds events into it; Host.Snapshot returns the live
// views of every session. Because it is built from events alone, an app can
// rebuild a session's view after a restart by applying the events its
// Journal kept for the session's key (ReadEvents with EventQuery.Key), in
// order.
type SessionView struct {
	Key     string `json:"key"` // the host key
	Bridge  string `json:"bridge"`
	Session string `json:"session,omitempty"` // the agent's current session id
	// Pos and Seq are those of the last event applied.
	Pos uint64 `json:"pos"`
	Seq uint64 `json:"seq"`
	// Turn is the number of the running or last turn; Busy says whether it
	// runs.
	Turn uint64 `json:"turn,omitempty"`
	Busy bool   `json:"busy"`
	// Tools are the rows of the running or last turn, and any row of an
	// earlier turn that is still open, in the order they started.
	Tools []ToolRow `json:"tools,omitempty"`
	// Pending are the requests waiting on the user, in the order they
	// arrived; each carries the live request, so it can be answered.
	Pending []PendingRequest `json:"pending,omitempty"`
	// AgentMode is the agent's current session mode; AgentModes the modes
	// it offered, with CurrentModeID kept equal to AgentMode.
	AgentMode     string                   `json:"agentMode,omitempty"`
	AgentModes    *acpclient.ModeState     `json:"agentModes,omitempty"`
	ConfigOptions []acpclient.ConfigOption `json:"configOptions,omitempty"`
	Models        *acpclient.ModelState    `json:"models,omitempty"`
	Usage         *Usage                   `json:"usage,omitempty"`
	Title         string                   `json:"title,omitempty"`
	Plan          []acpclient.PlanEntry    `json:"plan,omitempty"`
	// Plans are the agent's plans by id, when it sends the draft's plan
	// operations (see Event.Plans).
	Plans    []acpclient.PlanContent      `json:"plans,omitempty"`
	Todos    []Todo                       `json:"todos,omitempty"`
	Commands []acpclient.AvailableCommand `json:"commands,omitempty"`
	// Authority is the session's authority state as last reported (see
	// Session.Authority).
	Authority *AuthorityState `json:"authority,omitempty"`
	// Closed: the session was closed (session_closed) and not opened
	// again; the Host's Snapshot leaves closed sessions out.
	Closed bool `json:"closed,omitempty"`
	// Queue is the session's prompt queue, first to run first, and
	// QueuePaused whether it waits for Session.ResumeQueue (see
	// QueueUpdate).
	Queue       []QueuedPrompt `json:"queue,omitempty"`
	QueuePaused bool           `json:"queuePaused,omitempty"`

	// rows finds Tools by call id; it is a cache Apply keeps, rebuilt
	// when Tools is not the slice it indexed.
	rows *rowIndex
}

// ToolRow is one tool call of a session: a tool call id within one turn
// (agents reuse ids across turns, and each turn's call is a row of its own).
type ToolRow struct {
	Turn uint64   `json:"turn"`
	Tool ToolCall `json:"tool"`
	// Output is the end of the command output shown in the row: terminal
	// events naming its tool call, or a terminal its content names, at most
	// 64 KiB (toolRowOutputLimit), cut at a character boundary. OutputTruncated says earlier output was
	// dropped, here or at its source. Exit is how the command ended.
	Output          string                        `json:"output,omitempty"`
	OutputTruncated bool                          `json:"outputTruncated,omitempty"`
	Exit            *acpclient.TerminalExitStatus `json:"exit,omitempty"`
}

// toolRowOutputLimit bounds the output a SessionView keeps per tool row:
// the last 64 KiB, cut at a character boundary. The terminal events carry
// all of it.
const toolRowOutputLimit = 64 << 10

// Open reports whether the agent has not finished the call yet, by the
// rule the session's tool tracker ends rows with (isEnd): the row's Tool
// is the tracker's merged snapshot, which the view takes whole and never
// merges again.
func (r ToolRow) Open() bool { return !isEnd(r.Tool.Status) }

// PendingRequest is a request waiting on the user. Exactly one of
// Permission, Elicitation and Auth is set, as Type says.
type PendingRequest struct {
	// Type is "permission", "elicitation" or "auth", as in Decision.Type.
	Type string `json:"type"`
	// ID is the request's id (Decision.Request names it when it is settled).
	ID     string `json:"id"`
	Bridge string `json:"bridge"`
	Key    string `json:"key,omitempty"` // "" for a request outside any session
	Turn   uint64 `json:"turn,omitempty"`
	Pos    uint64 `json:"pos"` // of the event that brought it

	Permission  *PermissionRequest  `json:"permission,omitempty"`
	Elicitation *ElicitationRequest `json:"elicitation,omitempty"`
	Auth        *AuthRequest        `json:"auth,omitempty"`
}

// pendingOf returns the request an event brings, if any.
func pendingOf(ev *Event) (PendingRequest, bool) {
	p := PendingRequest{Bridge: ev.Bridge, Key: ev.Key, Turn: ev.Turn, Pos: ev.Pos}
	switch {
	case ev.Kind == KindPermission && ev.Permission != nil:
		p.Type, p.ID, p.Permission = "permission", ev.Permission.ID, ev.Permission
	case ev.Kind == KindElicitation && ev.Elicitation != nil:
		p.Type, p.ID, p.Elicitation = "elicitation", ev.Elicitation.ID, ev.Elicitation
	case ev.Kind == KindAuthRequired && ev.Auth != nil:
		p.Type, p.ID, p.Auth = "auth", ev.Auth.ID, ev.Auth
	default:
		return p, false
	}
	return p, true
}

// settle removes the request a decision names, keeping the others in order.
func settle(pending []PendingRequest, d *Decision) []PendingRequest {
	return removePending(pending, func(p PendingRequest) bool {
		return p.ID == d.Request && (d.Type == "" || d.Type == p.Type)
	})
}

func removePending(pending []PendingRequest, drop func(PendingRequest) bool) []PendingRequest {
	kept := pending[:0]
	for _, p := range pending {
		if !drop(p) {
			kept = append(kept, p)
		}
	}
	clear(pending[len(kept):])
	return kept
}

// Apply folds one event of the session into the view. Apply the session's
// events in order; events of other sessions do not belong here.
func (v *SessionView) Apply(ev Event) {
	if v.Key == "" {
		v.Key = ev.Key
	}
	if ev.Bridge != "" {
		v.Bridge = ev.Bridge
	}
	if ev.Session != "" {
		v.Session = ev.Session
	}
	v.Pos, v.Seq = ev.Pos, ev.Seq
	if p, ok := pendingOf(&ev); ok {
		v.Pending = append(v.Pending, p)
		return
	}
	switch ev.Kind {
	case KindSessionClosed:
		v.Closed, v.Busy, v.Pending = true, false, nil
	case KindSession:
		v.Closed = false
		v.applyState(&ev)
	case KindTurnStart:
		v.startTurn(ev.Turn)
	case KindTurnEnd:
		v.endTurn(ev.Turn)
	case KindToolStart, KindToolUpdate, KindToolEnd:
		if ev.Tool != nil {
			v.applyTool(&ev)
		}
	case KindTerminal:
		if ev.Terminal != nil {
			v.applyTerminal(ev.Terminal)
		}
	case KindDecision:
		if ev.Decision != nil {
			v.Pending = settle(v.Pending, ev.Decision)
		}
	case KindQueue:
		if ev.Queue != nil {
			v.Queue, v.QueuePaused = ev.Queue.Prompts, ev.Queue.Paused
		}
	default:
		v.applyState(&ev)
	}
}

// applyState folds the kinds that replace a piece of session state.
func (v *SessionView) applyState(ev *Event) {
	switch ev.Kind {
	case KindSession:
		if r := ev.SessionReady; r != nil {
			v.AgentModes, v.Models, v.ConfigOptions = r.AgentModes, r.Models, r.ConfigOptions
			v.AgentMode = ""
			if r.AgentModes != nil {
				v.AgentMode = r.AgentModes.CurrentModeID
			}
		}
	case KindAgentMode:
		v.AgentMode = ev.AgentMode
		if v.AgentModes != nil {
			modes := *v.AgentModes // events share their state: never change it in place
			modes.CurrentModeID = ev.AgentMode
			v.AgentModes = &modes
		}
	case KindConfig:
		v.ConfigOptions = ev.ConfigOptions
	case KindModel:
		if ev.Models != nil {
			v.Models = ev.Models
		}
	case KindAuthority:
		v.Authority = ev.Authority
	case KindUsage:
		v.Usage = ev.Usage
	case KindSessionInfo:
		if ev.SessionInfo != nil && ev.SessionInfo.TitleChanged {
			v.Title = ev.SessionInfo.Title
		}
	case KindPlan:
		v.Plan, v.Plans = ev.Plan, ev.Plans
	case KindTodos:
		v.Todos, v.Plan = ev.Todos, ev.Plan
	case KindCommands:
		v.Commands = ev.Commands
	}
}

// startTurn marks the turn running and lets go of the finished rows of
// earlier turns.
func (v *SessionView) startTurn(turn uint64) {
	if turn == 0 {
		turn = v.Turn + 1
	}
	v.Turn, v.Busy = turn, true
	kept := v.Tools[:0]
	for _, r := range v.Tools {
		if r.Turn == turn || r.Open() {
			kept = append(kept, r)
		}
	}
	clear(v.Tools[len(kept):])
	v.Tools, v.rows = kept, nil
}

// endTurn marks the turn over; requests it left waiting are gone with it.
func (v *SessionView) endTurn(turn uint64) {
	if turn == 0 {
		turn = v.Turn
	}
	v.Busy = false
	v.Pending = removePending(v.Pending, func(p PendingRequest) bool { return p.Turn == turn })
}

// applyTool updates the row of the event's turn and call id, or opens one.
// An update outside any turn (Late, or replayed) belongs to the newest row
// of its id.
func (v *SessionView) applyTool(ev *Event) {
	i := v.findRow(ev.Tool.ID, ev.Turn, ev.Kind != KindToolStart && (ev.Turn == 0 || ev.Late))
	if i < 0 {
		row := ToolRow{Turn: ev.Turn, Tool: *ev.Tool}
		if ev.Late && ev.Turn < v.Turn && !row.Open() {
			return // a late word on a finished row of a turn the view has let go
		}
		v.Tools = append(v.Tools, row)
		v.rowAdded()
		return
	}
	v.Tools[i].Tool = *ev.Tool
}

// applyTerminal adds output to the newest row that shows the terminal;
// output of a terminal no row shows is not kept.
func (v *SessionView) applyTerminal(t *terminal.Output) {
	i := v.terminalRow(t)
	if i < 0 {
		return
	}
	r := &v.Tools[i]
	out := r.Output + t.Data
	if t.Reset {
		out, r.OutputTruncated = t.Data, false
	}
	if len(out) > toolRowOutputLimit {
		cut := len(out) - toolRowOutputLimit
		for cut < len(out) && !utf8.RuneStart(out[cut]) {
			cut++
		}
		out, r.OutputTruncated = out[cut:], true
	}
	r.Output, r.OutputTruncated = out, r.OutputTruncated || t.Truncated
	if t.Exit != nil {
		r.Exit = t.Exit
	}
}

func (v *SessionView) terminalRow(t *terminal.Output) int {
	if t.ToolCallID != "" {
		return v.findRow(t.ToolCallID, 0, true)
	}
	for i := len(v.Tools) - 1; i >= 0; i-- {
		for _, c := range v.Tools[i].Tool.Content {
			if c.Type == acpclient.ToolContentTerminal && c.TerminalID == t.ID {
				return i
			}
		}
	}
	return -1
}

// findRow returns the newest row of call id in turn (any turn with
// anyTurn), or -1.
func (v *SessionView) findRow(id string, turn uint64, anyTurn bool) int {
	at := v.index().byID[id]
	for k := len(at) - 1; k >= 0; k-- {
		if r := &v.Tools[at[k]]; r.Turn == turn || anyTurn {
			return at[k]
		}
	}
	return -1
}

// clone returns a copy that later Applies to v do not change.
func (v *SessionView) clone() SessionView {
	c := *v
	c.Tools = append([]ToolRow(nil), v.Tools...)
	c.Pending = append([]PendingRequest(nil), v.Pending...)
	c.Queue = append([]QueuedPrompt(nil), v.Queue...)
	c.rows = nil
	return c
}

// rowIndex maps tool call ids to the positions of their rows in a
// SessionView's Tools, oldest first. Without it every tool event scanned
// all earlier rows: a replayed session of many thousand calls spent almost
// all its time there (quadratic in the calls).
type rowIndex struct {
	byID map[string][]int
	// The slice indexed, as its first element and length: Tools changed
	// outside Apply (or by a copy of the view) no longer matches.
	first *ToolRow
	n     int
}

// index returns the view's row index, building it if Tools is not what
// it indexed.
func (v *SessionView) index() *rowIndex {
	if x := v.rows; x.indexes(v, 0) {
		return x
	}
	x := &rowIndex{byID: make(map[string][]int, len(v.Tools))}
	for i := range v.Tools {
		id := v.Tools[i].Tool.ID
		x.byID[id] = append(x.byID[id], i)
	}
	x.mark(v)
	v.rows = x
	return x
}

// indexes reports whether x is v's index of all but its last extra rows.
func (x *rowIndex) indexes(v *SessionView, extra int) bool {
	if x == nil || x.n != len(v.Tools)-extra {
		return false
	}
	return x.n == 0 || x.first == &v.Tools[0]
}

// rowAdded records the row just appended to Tools; an index that did not
// cover the rows before it is dropped, to be rebuilt when next needed.
func (v *SessionView) rowAdded() {
	x := v.rows
	if !x.indexes(v, 1) {
		v.rows = nil
		return
	}
	i := len(v.Tools) - 1
	id := v.Tools[i].Tool.ID
	x.byID[id] = append(x.byID[id], i)
	x.mark(v)
}

func (x *rowIndex) mark(v *SessionView) {
	x.n, x.first = len(v.Tools), nil
	if x.n > 0 {
		x.first = &v.Tools[0]
	}
}
