package bridge

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/acphost/acphost/acpclient"
)

// handleUpdate maps one session/update, received at now, to events. It
// runs on the connection's dispatch goroutine, in the agent's order.
func (s *Session) handleUpdate(n *acpclient.SessionNotification, raw json.RawMessage, now time.Time) {
	var ev Event
	switch n.Update.(type) {
	case *acpclient.AgentMessageChunk, *acpclient.AgentThoughtChunk, *acpclient.UserMessageChunk:
		// Deltas carry no Raw: they may be merged, and extracting the raw
		// bytes would double the cost of the hottest path.
	default:
		ev.Raw = rawBeyondEvent(n.Update, raw)
	}
	switch u := n.Update.(type) {
	case *acpclient.AgentMessageChunk:
		s.emitChunk(&ev, KindText, &u.ContentChunk, now)
	case *acpclient.AgentThoughtChunk:
		s.emitChunk(&ev, KindThinking, &u.ContentChunk, now)
	case *acpclient.UserMessageChunk:
		s.emitChunk(&ev, KindUserText, &u.ContentChunk, now)
	case *acpclient.ToolCallStart:
		s.mu.Lock()
		snap, kinds := s.tools.announce(&u.ToolCall)
		terms := s.tools.terms.fromTool(u.ToolCallID, u.Content, u.Meta)
		s.mu.Unlock()
		s.emitToolTerminals(ev, snap, kinds, terms)
		s.placeTerminals(u.Content)
	case *acpclient.ToolCallProgress:
		s.toolProgress(ev, &u.ToolCallUpdate)
	case *acpclient.TerminalOutputChunk:
		s.mu.Lock()
		terms, err := s.tools.terms.fromChunk(u)
		s.mu.Unlock()
		s.emitTerminals(ev, terms, err, raw)
	case *acpclient.TerminalUpdate:
		s.mu.Lock()
		terms, err := s.tools.terms.fromUpdate(u)
		s.mu.Unlock()
		s.emitTerminals(ev, terms, err, raw)
	case *acpclient.PlanUpdate:
		ev.Kind, ev.Plan = KindPlan, u.Entries
		s.emitFromAgent(ev)
	case *acpclient.PlanContentUpdate, *acpclient.PlanRemoved:
		s.emitPlans(ev, n.Update, raw)
	case *acpclient.AvailableCommandsUpdate:
		ev.Kind, ev.Commands = KindCommands, u.AvailableCommands
		s.emitFromAgent(ev)
	case *acpclient.CurrentModeUpdate:
		s.auth.agentReportedMode(u.CurrentModeID)
		ev.Kind, ev.AgentMode = KindAgentMode, u.CurrentModeID
		s.emitFromAgent(ev)
		s.auth.recheckAuthority(false)
	case *acpclient.ConfigOptionUpdate:
		s.ctl.rememberOptions(u.ConfigOptions)
		ev.Kind, ev.ConfigOptions = KindConfig, u.ConfigOptions
		s.emitFromAgent(ev)
		s.auth.recheckAuthority(false)
	case *acpclient.SessionInfoUpdate:
		info := &SessionInfo{}
		info.Title, info.TitleChanged = u.Title()
		info.UpdatedAt, info.UpdatedAtChanged = u.UpdatedAt()
		ev.Kind, ev.SessionInfo = KindSessionInfo, info
		s.emitFromAgent(ev)
	case *acpclient.UsageUpdate:
		used, size := u.Used, u.Size
		if s.b.provider.UsageFromMeta != nil {
			if pu, ps, ok := s.b.provider.UsageFromMeta(u.Meta); ok {
				used, size = pu, ps
			}
		}
		ev.Kind, ev.Usage = KindUsage, s.measure(used, size, u.Cost)
		s.emitFromAgent(ev)
	case *acpclient.CompactionUpdate:
		s.emitCompaction(ev, s.foldCompaction(u, raw))
	case *acpclient.CompactionSummaryChunk:
		if !s.foldSummaryChunk(u) {
			ev.Kind = KindExt // not text: the event keeps it whole
			s.emitFromAgent(ev)
		}
	case *acpclient.Notice:
		ev.Kind, ev.Raw = KindExt, raw // a notice without a title says nothing to show
		if u.Title != "" {
			ev.Raw = rawBeyondEvent(u, raw)
			ev.Kind, ev.Text = KindNotice, u.Title
			ev.Notice = &Notice{Severity: u.Severity, Title: u.Title, Description: u.Description, Meta: u.Meta}
		}
		s.emitFromAgent(ev)
	case *acpclient.UnknownUpdate:
		if !s.vendorUpdate(ev, u) {
			ev.Kind = KindExt
			s.emitFromAgent(ev)
		}
	default:
		ev.Kind = KindExt
		s.emitFromAgent(ev)
	}
}

// vendorUpdate offers an update of a vendor kind ("_" prefix) to the
// provider's Update hook and emits what it maps it to; false means the
// update is not the provider's and falls through to ext.
func (s *Session) vendorUpdate(ev Event, u *acpclient.UnknownUpdate) bool {
	hook := s.b.provider.Update
	if hook == nil || !strings.HasPrefix(u.KindName, "_") {
		return false
	}
	events, handled := hook(u.KindName, u.Raw)
	if !handled {
		return false
	}
	for i := range events {
		if i == 0 && events[i].Raw == nil {
			events[i].Raw = ev.Raw // one agent message, reported once
		}
	}
	s.emitAll(events)
	return true
}

// toolProgress maps a tool_call_update. One that only carries terminal
// output in its _meta leaves the row alone and is reported as terminal
// events only.
func (s *Session) toolProgress(ev Event, u *acpclient.ToolCallUpdate) {
	s.mu.Lock()
	var snap *ToolCall
	var kinds []Kind
	if !outputOnly(u) {
		var late bool
		snap, kinds, late = s.tools.update(u)
		if late { // a row of the previous turn: it belongs there
			ev.Late, ev.Turn = true, s.ctl.lastTurn
		}
	}
	terms := s.tools.terms.fromTool(u.ToolCallID, u.Content, u.Meta)
	s.mu.Unlock()
	s.emitToolTerminals(ev, snap, kinds, terms)
	s.placeTerminals(u.Content)
}

// emitChunk reports a message chunk received at now: the hot path of a
// streaming agent, so ev goes by pointer and the clock is not read again.
func (s *Session) emitChunk(ev *Event, kind Kind, c *acpclient.ContentChunk, now time.Time) {
	switch {
	case c.Content.Type == acpclient.ContentText:
		if c.Content.Text == "" {
			// An empty chunk (claude sends one before its reply) says
			// nothing: no event, but a sign of life. Its message id is on
			// the chunks with text too, and no text event carries a
			// chunk's _meta.
			s.activity()
			return
		}
		ev.Kind, ev.Text = kind, c.Content.Text
	case c.Content.Raw != nil:
		ev.Kind = KindExt // content of a type this module does not know: pass it on whole
		ev.Raw, _ = json.Marshal(c)
		s.emitFromAgentAt(ev, now)
		return
	default:
		ev.Kind = kind
		ev.Content, ev.ContentDropped = boundedContent(c.Content)
	}
	if c.MessageID != nil {
		ev.MessageID = *c.MessageID
	}
	s.emitFromAgentAt(ev, now)
}

func (s *Session) emitTool(ev Event, snap *ToolCall, kinds []Kind) {
	for i, k := range kinds {
		e := ev
		e.Kind, e.Tool = k, snap
		if i > 0 {
			e.Raw = nil // one agent message, reported once
		}
		s.emitFromAgent(e)
		if k == KindToolEnd && s.b.provider.OnToolEnd != nil {
			s.emitAll(s.b.provider.OnToolEnd(s.id, snap))
		}
	}
}
