package bridge

import (
	"encoding/json"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge/terminal"
)

// Which row shows a terminal's output is decided here, for every kind of
// terminal: the row of the tool call that names it, in its content
// (acpclient.ToolContentTerminal) or in its _meta (terminal_info; the
// extension's output and exit keys name their call too). The session's
// termTracker keeps the link, under the session's lock; terminal events
// carry it as Output.ToolCallID. A terminal the bridge runs may print
// before any tool call names it: its events then go out with no row, and
// once a row is named (placeTerminals) the set sends its output again,
// Reset, for that row.

// terminalRow is the tool call whose row shows terminal id, or "" while
// none has named it.
func (s *Session) terminalRow(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools.terms.toolCallOf(id)
}

// linkContent links the terminals a tool call's content names to it.
func (t *termTracker) linkContent(toolCallID string, content []acpclient.ToolCallContent) {
	for _, c := range content {
		if c.Type == acpclient.ToolContentTerminal {
			t.link(c.TerminalID, toolCallID)
		}
	}
}

// toolCallOf returns the tool call linked to a terminal, or "".
func (t *termTracker) toolCallOf(id string) string {
	if st, ok := t.terms[id]; ok {
		return st.toolCallID
	}
	return ""
}

// link records the tool call whose row shows the terminal.
func (t *termTracker) link(id, toolCallID string) {
	if id != "" && toolCallID != "" {
		t.state(id).toolCallID = toolCallID
	}
}

// placeTerminals tells the bridge's terminals that content names them, once
// the row is out: output they sent before is sent again for the row.
func (s *Session) placeTerminals(content []acpclient.ToolCallContent) {
	for _, c := range content {
		if c.Type == acpclient.ToolContentTerminal {
			s.b.terminals.Placed(ofSession(s), c.TerminalID)
		}
	}
}

// emitToolTerminals reports a tool call's events and the terminal output
// it carried, the output before the end of the row, so that a row that
// ends has shown all of it.
func (s *Session) emitToolTerminals(ev Event, snap *ToolCall, kinds []Kind, terms []*terminal.Output) {
	end := len(kinds) > 0 && kinds[len(kinds)-1] == KindToolEnd
	before := kinds
	if end {
		before = kinds[:len(kinds)-1]
	}
	s.emitTool(ev, snap, before)
	if len(before) > 0 {
		ev.Raw = nil // one agent message, reported once
	}
	for _, t := range terms {
		s.emitFromAgent(Event{Kind: KindTerminal, Terminal: t, Raw: ev.Raw})
		ev.Raw = nil
	}
	if end {
		s.emitTool(ev, snap, kinds[len(kinds)-1:])
	}
}

// emitTerminals reports the events of a terminal update; one whose output
// could not be decoded is passed on whole as ext.
func (s *Session) emitTerminals(ev Event, terms []*terminal.Output, err error, raw json.RawMessage) {
	if err != nil {
		s.b.logger.Warn("bridge: terminal update not understood", "session", s.id, "err", err)
		ev.Kind, ev.Raw = KindExt, raw
		s.emitFromAgent(ev)
		return
	}
	for _, t := range terms {
		e := ev
		e.Kind, e.Terminal = KindTerminal, t
		s.emitFromAgent(e)
		ev.Raw = nil
	}
}
