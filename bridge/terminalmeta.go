package bridge

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge/terminal"
)

// Sources of the terminal events the agent's own commands produce (see
// terminal.Output.Source).
const (
	terminalFromMeta   = "meta"
	terminalFromUpdate = "update"
)

// maxTrackedTerminals bounds how many terminals a session remembers; the
// oldest is forgotten first. A terminal is remembered past its exit, so an
// agent's final snapshot of its output is not reported twice.
const maxTrackedTerminals = 256

// termState is what the bridge remembers of one terminal the agent runs:
// not its output, only enough to report each byte once.
type termState struct {
	toolCallID string
	// sent and sum are the length and FNV-1a hash of the output bytes
	// reported so far, to recognise a snapshot that extends them.
	sent int
	sum  uint64
	// carry is an incomplete UTF-8 character at the end of the output,
	// held back until its last bytes arrive (at most 3 bytes).
	carry []byte
	order uint64
}

// termTracker maps the terminal reports of a session's agent to terminal
// events: claude-agent-acp's and codex-acp's tool call _meta, and the v2
// draft's terminal updates. It is guarded by the session's lock.
type termTracker struct {
	terms map[string]*termState
	count uint64
}

func newTermTracker() *termTracker { return &termTracker{terms: map[string]*termState{}} }

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvAdd(sum uint64, b []byte) uint64 {
	for _, c := range b {
		sum = (sum ^ uint64(c)) * fnvPrime
	}
	return sum
}

// state returns the terminal's state, remembering a new terminal (and
// forgetting the oldest one when too many are remembered).
func (t *termTracker) state(id string) *termState {
	if st, ok := t.terms[id]; ok {
		return st
	}
	if len(t.terms) >= maxTrackedTerminals {
		var oldest string
		var at uint64
		for k, st := range t.terms {
			if oldest == "" || st.order < at {
				oldest, at = k, st.order
			}
		}
		delete(t.terms, oldest)
	}
	t.count++
	st := &termState{sum: fnvOffset, order: t.count}
	t.terms[id] = st
	return st
}

// appendOutput reports bytes added to the terminal's output; nil when
// there is nothing to show yet (no bytes, or only part of a character).
func (t *termTracker) appendOutput(id, toolCallID, source string, data []byte) *terminal.Output {
	st := t.state(id)
	st.sent += len(data)
	st.sum = fnvAdd(st.sum, data)
	text := st.text(data)
	if text == "" {
		return nil
	}
	return &terminal.Output{ID: id, ToolCallID: cmp.Or(toolCallID, st.toolCallID), Source: source, Data: text}
}

// replaceOutput reports a snapshot of the terminal's whole output: the
// bytes beyond those already reported when it extends them, or the whole
// snapshot marked Reset when it does not.
func (t *termTracker) replaceOutput(id, source string, snap []byte) *terminal.Output {
	st := t.state(id)
	if len(snap) >= st.sent && fnvAdd(fnvOffset, snap[:st.sent]) == st.sum {
		return t.appendOutput(id, "", source, snap[st.sent:])
	}
	st.sent, st.sum, st.carry = len(snap), fnvAdd(fnvOffset, snap), nil
	return &terminal.Output{ID: id, ToolCallID: st.toolCallID, Source: source, Data: st.text(snap), Reset: true}
}

// exit reports the terminal's end, with any character still held back.
func (t *termTracker) exit(id, toolCallID, source string, status *acpclient.TerminalExitStatus) *terminal.Output {
	st := t.state(id)
	rest := strings.ToValidUTF8(string(st.carry), "\uFFFD")
	st.carry = nil
	return &terminal.Output{ID: id, ToolCallID: cmp.Or(toolCallID, st.toolCallID), Source: source, Data: rest, Exit: status}
}

// text returns the held-back bytes and data as valid UTF-8, holding back
// an incomplete character at the end.
func (st *termState) text(data []byte) string {
	b := data
	if len(st.carry) > 0 {
		b = append(st.carry, data...)
		st.carry = nil
	}
	if cut := incompleteTail(b); cut < len(b) {
		st.carry = append([]byte(nil), b[cut:]...)
		b = b[:cut]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// incompleteTail returns where an incomplete UTF-8 character at the end of
// b starts, or len(b).
func incompleteTail(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// terminalMeta is the terminal extension of claude-agent-acp and codex-acp
// in a tool call's _meta: terminal_info names the call's terminal,
// terminal_output and terminal_output_delta add output (both append: each
// carries new bytes), terminal_exit ends it. The terminal id defaults to
// the tool call id, which both agents use.
type terminalMeta struct {
	Info *struct {
		TerminalID string `json:"terminal_id"`
	} `json:"terminal_info"`
	Output *metaOutput `json:"terminal_output"`
	Delta  *metaOutput `json:"terminal_output_delta"`
	Exit   *struct {
		TerminalID string  `json:"terminal_id"`
		ExitCode   *int    `json:"exit_code"`
		Signal     *string `json:"signal"`
	} `json:"terminal_exit"`
}

type metaOutput struct {
	TerminalID string `json:"terminal_id"`
	Data       string `json:"data"`
}

// parseTerminalMeta reads the terminal keys of a tool call's _meta; false
// when it has none. A key of the wrong shape is ignored.
func parseTerminalMeta(meta json.RawMessage) (terminalMeta, bool) {
	var m terminalMeta
	if !bytes.Contains(meta, []byte(`"terminal_`)) {
		return m, false
	}
	_ = json.Unmarshal(meta, &m) // fields of the wrong type stay nil
	return m, m.Info != nil || m.Output != nil || m.Delta != nil || m.Exit != nil
}

// outputOnly reports whether a tool call update carries nothing but
// terminal output or exit in its _meta: it changes no field of the row, so
// it is reported as terminal events alone, which merge while the consumer
// lags.
func outputOnly(u *acpclient.ToolCallUpdate) bool {
	if u.Title != nil || u.Kind != nil || u.Status != nil || u.Name != nil || u.Content != nil ||
		u.Locations != nil || u.RawInput != nil || u.RawOutput != nil {
		return false
	}
	m, ok := parseTerminalMeta(u.Meta)
	return ok && (m.Output != nil || m.Delta != nil || m.Exit != nil)
}

// fromTool links the terminals a tool call names (terminal content, or
// _meta.terminal_info) to it and returns the output and exit its _meta
// reports, in that order.
func (t *termTracker) fromTool(toolCallID string, content []acpclient.ToolCallContent, meta json.RawMessage) []*terminal.Output {
	t.linkContent(toolCallID, content)
	m, ok := parseTerminalMeta(meta)
	if !ok {
		return nil
	}
	id := func(s string) string { return cmp.Or(s, toolCallID) }
	if m.Info != nil {
		t.link(id(m.Info.TerminalID), toolCallID)
	}
	var out []*terminal.Output
	for _, o := range []*metaOutput{m.Output, m.Delta} {
		if o == nil {
			continue
		}
		if ev := t.appendOutput(id(o.TerminalID), toolCallID, terminalFromMeta, []byte(o.Data)); ev != nil {
			out = append(out, ev)
		}
	}
	if e := m.Exit; e != nil {
		out = append(out, t.exit(id(e.TerminalID), toolCallID, terminalFromMeta,
			&acpclient.TerminalExitStatus{ExitCode: e.ExitCode, Signal: e.Signal}))
	}
	return out
}

// fromChunk maps a terminal_output_chunk.
func (t *termTracker) fromChunk(c *acpclient.TerminalOutputChunk) ([]*terminal.Output, error) {
	data, err := c.Bytes()
	if err != nil {
		return nil, err
	}
	if ev := t.appendOutput(c.TerminalID, "", terminalFromUpdate, data); ev != nil {
		return []*terminal.Output{ev}, nil
	}
	return nil, nil
}

// fromUpdate maps a terminal_update: its output snapshot, then its exit.
// An update with neither (the terminal's command and cwd) is reported as
// an event without output, whose Raw says what changed.
func (t *termTracker) fromUpdate(u *acpclient.TerminalUpdate) ([]*terminal.Output, error) {
	var out []*terminal.Output
	if u.Output != nil {
		snap, err := u.Output.Bytes()
		if err != nil {
			return nil, err
		}
		if ev := t.replaceOutput(u.TerminalID, terminalFromUpdate, snap); ev != nil {
			out = append(out, ev)
		}
	}
	if u.ExitStatus != nil {
		out = append(out, t.exit(u.TerminalID, "", terminalFromUpdate, u.ExitStatus))
	}
	if len(out) == 0 {
		out = append(out, &terminal.Output{ID: u.TerminalID, ToolCallID: t.state(u.TerminalID).toolCallID, Source: terminalFromUpdate})
	}
	return out, nil
}
