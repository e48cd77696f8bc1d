package bridge

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/acphost/acphost/acpclient"
)

// toolTracker merges a session's tool call announcements and updates into
// one row per tool call id and turn. Agents reuse ids across turns (call_1
// every turn), so rows belong to the turn that opened them: the turn's end
// closes the rows still open, a new turn forgets the ended ones, and an id
// seen again in a new turn opens a new row.
type toolTracker struct {
	// open are the rows not finished yet; ended the rows finished (or
	// closed by the turn's end) since the current turn began, so that late
	// updates find their row instead of opening one.
	open, ended map[string]*ToolCall
	// prev are the rows the previous turn ended: an update (not a new
	// tool_call) for one of them that arrives in the next turn is a late
	// word on that row, not a new row of this turn.
	prev   map[string]*ToolCall
	inTurn bool
	// opened numbers the open rows in the order they opened, so rows
	// closed together are reported in that order.
	opened map[*ToolCall]int
	count  int
	// toolName extracts a provider's own tool identity from _meta.
	toolName func(meta json.RawMessage) string
	// toolParent extracts the id of the call a call runs under from _meta.
	toolParent func(meta json.RawMessage) string
	// titleName reads a tool name from a title, the last resort.
	titleName func(title string) string
	// terms follows the terminals of the agent's own commands.
	terms *termTracker
}

func newToolTracker(p *Provider) *toolTracker {
	return &toolTracker{open: map[string]*ToolCall{}, ended: map[string]*ToolCall{}, opened: map[*ToolCall]int{},
		toolName: p.ToolName, toolParent: p.ToolParent, titleName: p.ToolNameFromTitle, terms: newTermTracker()}
}

// isEnd reports whether a status ends a tool call: the one rule for the
// tracker's rows and for SessionView's (ToolRow.Open).
func isEnd(status string) bool {
	return status == acpclient.ToolStatusCompleted || status == acpclient.ToolStatusFailed ||
		status == "cancelled" || status == ToolUnfinished
}

// announce applies a tool_call. A repeat for an open id is an update; in a
// turn, an id whose row ended opens a new row (a new call), while between
// turns it is a late word on the ended row.
func (t *toolTracker) announce(tc *acpclient.ToolCall) (snapshot *ToolCall, kinds []Kind) {
	delete(t.prev, tc.ToolCallID) // a new call in this turn
	call, known, ended := t.row(tc.ToolCallID, !t.inTurn)
	title, kind, status, name := tc.Title, tc.Kind, tc.Status, tc.Name
	t.apply(call, &title, &kind, &status, &name, tc.Content, tc.Locations, tc.RawInput, tc.RawOutput, tc.Meta)
	return t.emitKinds(call, known, ended)
}

// update applies a tool_call_update (or the tool call of a permission
// request). An update for an id never seen creates the row; one for an
// ended row is delivered on that row, which stays ended. late reports an
// update for a row of the previous turn, which belongs to that turn.
func (t *toolTracker) update(u *acpclient.ToolCallUpdate) (snapshot *ToolCall, kinds []Kind, late bool) {
	if _, open := t.open[u.ToolCallID]; !open {
		if _, ended := t.ended[u.ToolCallID]; !ended {
			if call, ok := t.prev[u.ToolCallID]; ok {
				t.apply(call, u.Title, u.Kind, u.Status, u.Name, u.Content, u.Locations, u.RawInput, u.RawOutput, u.Meta)
				return call.clone(), []Kind{KindToolUpdate}, true
			}
		}
	}
	call, known, ended := t.row(u.ToolCallID, true)
	t.apply(call, u.Title, u.Kind, u.Status, u.Name, u.Content, u.Locations, u.RawInput, u.RawOutput, u.Meta)
	snapshot, kinds = t.emitKinds(call, known, ended)
	return snapshot, kinds, false
}

// row finds the row for id: an open one, an ended one when useEnded, or a
// new open row.
func (t *toolTracker) row(id string, useEnded bool) (call *ToolCall, known, ended bool) {
	if call, ok := t.open[id]; ok {
		return call, true, false
	}
	if call, ok := t.ended[id]; ok && useEnded {
		return call, true, true
	}
	delete(t.ended, id)
	call = &ToolCall{ID: id, Status: acpclient.ToolStatusPending, Kind: acpclient.ToolKindOther}
	t.open[id] = call
	t.count++
	t.opened[call] = t.count
	return call, false, false
}

// ensure makes sure an open row exists for id without changing a known
// one; it reports whether the row is new.
func (t *toolTracker) ensure(u *acpclient.ToolCallUpdate) (*ToolCall, bool) {
	if call, ok := t.open[u.ToolCallID]; ok {
		return call.clone(), false
	}
	delete(t.ended, u.ToolCallID)
	delete(t.prev, u.ToolCallID) // a permission asked now is for a call of this turn
	snap, _, _ := t.update(u)
	return snap, true
}

func (t *toolTracker) emitKinds(call *ToolCall, known, ended bool) (*ToolCall, []Kind) {
	snap := call.clone()
	var kinds []Kind
	switch {
	case !known:
		kinds = append(kinds, KindToolStart)
	case ended || !isEnd(call.Status):
		kinds = append(kinds, KindToolUpdate) // a late word on an ended row never ends it twice
	}
	if !ended && isEnd(call.Status) {
		kinds = append(kinds, KindToolEnd)
		t.closeRow(call)
	}
	return snap, kinds
}

// beginTurn starts a turn: the rows of the previous one are set aside, so
// its ids open new rows (and only late updates still find them). Rows still open (opened by late updates between
// turns) are closed as unfinished and returned.
func (t *toolTracker) beginTurn() []*ToolCall {
	left := t.closeOpen()
	t.prev, t.ended = t.ended, map[string]*ToolCall{}
	t.inTurn = true
	return left
}

// endTurn ends the turn: every row still open is closed with status
// ToolUnfinished and returned; late updates then find them ended.
func (t *toolTracker) endTurn() []*ToolCall {
	t.inTurn = false
	return t.closeOpen()
}

func (t *toolTracker) closeOpen() []*ToolCall {
	rows := slices.Collect(maps.Values(t.open))
	slices.SortFunc(rows, func(a, b *ToolCall) int { return t.opened[a] - t.opened[b] })
	out := make([]*ToolCall, 0, len(rows))
	for _, call := range rows {
		call.Status = ToolUnfinished
		out = append(out, call.clone())
		t.closeRow(call)
	}
	return out
}

// closeRow moves a finished row from open to ended.
func (t *toolTracker) closeRow(call *ToolCall) {
	delete(t.open, call.ID)
	delete(t.opened, call)
	t.ended[call.ID] = call
}

func (t *toolTracker) apply(call *ToolCall, title, kind, status, name *string, content []acpclient.ToolCallContent,
	locations []acpclient.ToolCallLocation, rawIn, rawOut, meta json.RawMessage) {
	if title != nil && *title != "" {
		call.Title = *title
	}
	if kind != nil && *kind != "" {
		call.Kind = *kind
	}
	if status != nil && *status != "" {
		call.Status = *status
	}
	if name != nil && *name != "" && (call.Name == "" || call.nameFromTitle) {
		call.Name, call.nameFromTitle = *name, false
	}
	if content != nil {
		call.Content = content
	}
	if locations != nil {
		call.Locations = locations
	}
	if rawIn != nil {
		call.RawInput = rawIn
	}
	if rawOut != nil {
		call.RawOutput = rawOut
	}
	if meta != nil {
		call.Meta = meta
		if t.toolName != nil {
			if n := t.toolName(meta); n != "" {
				call.Name, call.nameFromTitle = n, false // the provider's identity wins over ACP's generic name
			}
		}
		if t.toolParent != nil {
			if p := t.toolParent(meta); p != "" && p != call.ID {
				call.Parent = p
			}
		}
	}
	t.nameFromTitle(call)
}

// nameFromTitle gives a call without a better name the one its title
// carries, if the provider reads names from titles; a later name from
// _meta or ACP's name field replaces it.
func (t *toolTracker) nameFromTitle(call *ToolCall) {
	if t.titleName == nil || (call.Name != "" && !call.nameFromTitle) {
		return
	}
	if n := t.titleName(call.Title); n != "" {
		call.Name, call.nameFromTitle = n, true
	}
}

func (c *ToolCall) clone() *ToolCall {
	cp := *c
	return &cp
}
