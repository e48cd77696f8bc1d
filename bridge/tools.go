package bridge

import (
	"encoding/json"

	"github.com/acphost/acphost/acpclient"
)

// toolTracker merges a session's tool call announcements and updates into
// one row per tool call id.
type toolTracker struct {
	calls map[string]*ToolCall
	// toolName extracts a provider's own tool identity from _meta.
	toolName func(meta json.RawMessage) string
	// titleName reads a tool name from a title, the last resort.
	titleName func(title string) string
}

func newToolTracker(p *Provider) *toolTracker {
	return &toolTracker{calls: map[string]*ToolCall{}, toolName: p.ToolName, titleName: p.ToolNameFromTitle}
}

// isEnd reports whether a status ends a tool call.
func isEnd(status string) bool {
	return status == acpclient.ToolStatusCompleted || status == acpclient.ToolStatusFailed || status == "cancelled"
}

// announce applies a tool_call. A repeat for a known id is an update.
func (t *toolTracker) announce(tc *acpclient.ToolCall) (snapshot *ToolCall, kinds []Kind) {
	call, known := t.calls[tc.ToolCallID]
	if !known {
		call = &ToolCall{ID: tc.ToolCallID, Status: acpclient.ToolStatusPending, Kind: acpclient.ToolKindOther}
		t.calls[tc.ToolCallID] = call
	}
	title, kind, status, name := tc.Title, tc.Kind, tc.Status, tc.Name
	t.apply(call, &title, &kind, &status, &name, tc.Content, tc.Locations, tc.RawInput, tc.RawOutput, tc.Meta)
	return t.emitKinds(call, known)
}

// update applies a tool_call_update (or the tool call of a permission
// request). An update for an id never announced creates the row.
func (t *toolTracker) update(u *acpclient.ToolCallUpdate) (snapshot *ToolCall, kinds []Kind) {
	call, known := t.calls[u.ToolCallID]
	if !known {
		call = &ToolCall{ID: u.ToolCallID, Status: acpclient.ToolStatusPending, Kind: acpclient.ToolKindOther}
		t.calls[u.ToolCallID] = call
	}
	t.apply(call, u.Title, u.Kind, u.Status, u.Name, u.Content, u.Locations, u.RawInput, u.RawOutput, u.Meta)
	return t.emitKinds(call, known)
}

// ensure makes sure a row exists for id without changing a known one; it
// reports whether the row is new.
func (t *toolTracker) ensure(u *acpclient.ToolCallUpdate) (*ToolCall, bool) {
	if call, ok := t.calls[u.ToolCallID]; ok {
		return call, false
	}
	snap, _ := t.update(u)
	return snap, true
}

func (t *toolTracker) emitKinds(call *ToolCall, known bool) (*ToolCall, []Kind) {
	snap := call.clone()
	var kinds []Kind
	if !known {
		kinds = append(kinds, KindToolStart)
	} else if !isEnd(call.Status) {
		kinds = append(kinds, KindToolUpdate)
	}
	if isEnd(call.Status) {
		kinds = append(kinds, KindToolEnd)
		delete(t.calls, call.ID)
	}
	return snap, kinds
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

// cancelAll ends every open row as cancelled (the turn was cancelled; v1
// has no cancelled status on the wire).
func (t *toolTracker) cancelAll() []*ToolCall {
	var out []*ToolCall
	for id, call := range t.calls {
		call.Status = "cancelled"
		out = append(out, call.clone())
		delete(t.calls, id)
	}
	return out
}

func (c *ToolCall) clone() *ToolCall {
	cp := *c
	return &cp
}
