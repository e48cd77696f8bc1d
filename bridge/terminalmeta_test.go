package bridge

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/internal/waitfor"
)

// describeTerminal is describe() with a terminal event's fields.
func describeTerminal(ev Event) string {
	if ev.Kind != KindTerminal {
		return describe(ev)
	}
	t := ev.Terminal
	s := fmt.Sprintf("terminal:%s:%s:%s:%q", t.ID, t.ToolCallID, t.Source, t.Data)
	if t.Reset {
		s += ":reset"
	}
	if t.Exit != nil {
		code, sig := "nil", "nil"
		if t.Exit.ExitCode != nil {
			code = fmt.Sprint(*t.Exit.ExitCode)
		}
		if t.Exit.Signal != nil {
			sig = *t.Exit.Signal
		}
		s += ":exit " + code + "/" + sig
	}
	return s
}

// runTerminalTurn runs one turn of steps and returns the session's events
// of that turn, described, without turn_start and turn_end.
func runTerminalTurn(t *testing.T, cfg Config, steps ...acptest.Step) ([]string, []Event, *Host) {
	t.Helper()
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("run")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	var evs []Event
	for _, ev := range rec.of(cfg.ID, s.ID()) {
		if ev.Turn == 1 && ev.Kind != KindTurnStart && ev.Kind != KindTurnEnd {
			evs = append(evs, ev)
		}
	}
	evs = coalesce(evs)
	var got []string
	for _, ev := range evs {
		got = append(got, describeTerminal(ev))
	}
	return got, evs, h
}

// coalesce merges terminal events the way the Host's queue may while the
// consumer lags, so that a test does not depend on the consumer's speed.
func coalesce(evs []Event) []Event {
	var out []Event
	for _, ev := range evs {
		if n := len(out); n > 0 && ev.Kind == KindTerminal && out[n-1].Kind == KindTerminal {
			last := out[n-1]
			a, b := *last.Terminal, *ev.Terminal
			if a.Exit == nil && b.Exit == nil && last.Raw == nil && ev.Raw == nil && a.ID == b.ID && a.Source == b.Source && a.ToolCallID == b.ToolCallID {
				if b.Reset {
					a.Data, a.Reset = "", true
				}
				a.Data += b.Data
				out[n-1].Terminal = &a
				continue
			}
		}
		out = append(out, ev)
	}
	return out
}

func terminalScript(steps ...acptest.Step) acptest.Script {
	return acptest.Script{Prompts: []acptest.Turn{{Steps: steps}}}
}

func sameList(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestAgentTerminalOutputIsAdvertised: Config.AgentTerminalOutput declares
// clientCapabilities._meta.terminal_output in initialize, next to the
// app's own keys; without it the key is absent.
func TestAgentTerminalOutputIsAdvertised(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprint(on), func(t *testing.T) {
			h, _ := newHostAndRecorder(t, nil)
			cfg, record, _ := recordedAgent(t, "termcap", acptest.Script{})
			cfg.AgentTerminalOutput = on
			cfg.ClientCapabilitiesMeta = raw(`{"vendor.example/x":1}`)
			b, err := h.Start(ctxT(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			b.Close()
			msgs, err := acptest.ReadRecord(record)
			if err != nil {
				t.Fatal(err)
			}
			var init struct {
				ClientCapabilities struct {
					Meta map[string]any `json:"_meta"`
				} `json:"clientCapabilities"`
			}
			if len(msgs) == 0 || msgs[0].Method != "initialize" || json.Unmarshal(msgs[0].Params, &init) != nil {
				t.Fatalf("no initialize recorded: %+v", msgs)
			}
			meta := init.ClientCapabilities.Meta
			if v, set := meta["terminal_output"]; set != on || (on && v != true) || meta["vendor.example/x"] == nil {
				t.Errorf("clientCapabilities._meta %v", meta)
			}
		})
	}
}

// TestClaudeTerminalMetaBecomesTerminalEvents: claude-agent-acp's shapes
// (src/acp-agent.ts, src/tools.ts: terminal_info on the Bash tool_call,
// terminal_output in an update of its own, terminal_exit with the status)
// and codex-acp's terminal_output_delta become terminal events of the
// row, before its end; the output-only updates are no tool events, and
// the row keeps its _meta; the view's row holds the output and the exit.
func TestClaudeTerminalMetaBecomesTerminalEvents(t *testing.T) {
	cfg := agentConfig(t, "claude", terminalScript(
		update(`{"sessionUpdate":"tool_call","toolCallId":"toolu_1","title":"go test ./...","kind":"execute","status":"pending",`+
			`"rawInput":{"command":"go test ./..."},"content":[{"type":"terminal","terminalId":"toolu_1"}],`+
			`"_meta":{"claudeCode":{"toolName":"Bash"},"terminal_info":{"terminal_id":"toolu_1"}}}`),
		update(`{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","_meta":{"terminal_output":{"terminal_id":"toolu_1","data":"ok  ./...\n✓ done\n"}}}`),
		update(`{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","status":"completed","rawOutput":"ok  ./...\n✓ done\n",`+
			`"content":[{"type":"terminal","terminalId":"toolu_1"}],`+
			`"_meta":{"claudeCode":{"toolName":"Bash"},"terminal_exit":{"terminal_id":"toolu_1","exit_code":0,"signal":null}}}`),
		// codex-acp: deltas, one without terminal_id (the tool call id is the terminal's).
		update(`{"sessionUpdate":"tool_call","toolCallId":"call_2","title":"make","kind":"execute","status":"in_progress",`+
			`"_meta":{"terminal_info":{"terminal_id":"call_2"}}}`),
		update(`{"sessionUpdate":"tool_call_update","toolCallId":"call_2","_meta":{"terminal_output_delta":{"terminal_id":"call_2","data":"cc -o a\n"}}}`),
		update(`{"sessionUpdate":"tool_call_update","toolCallId":"call_2","_meta":{"terminal_output_delta":{"data":"error\n"}}}`),
		update(`{"sessionUpdate":"tool_call_update","toolCallId":"call_2","status":"failed",`+
			`"_meta":{"terminal_exit":{"terminal_id":"call_2","exit_code":2,"signal":"SIGTERM"}}}`),
	))
	got, evs, h := runTerminalTurn(t, cfg)
	sameList(t, got, []string{
		"tool_start:toolu_1:pending",
		`terminal:toolu_1:toolu_1:meta:"ok  ./...\n✓ done\n"`,
		`terminal:toolu_1:toolu_1:meta:"":exit 0/nil`,
		"tool_end:toolu_1:completed",
		"tool_start:call_2:in_progress",
		`terminal:call_2:call_2:meta:"cc -o a\nerror\n"`,
		`terminal:call_2:call_2:meta:"":exit 2/SIGTERM`,
		"tool_end:call_2:failed",
	})
	for _, ev := range evs {
		if ev.Kind == KindToolStart && ev.Tool.ID == "toolu_1" && !strings.Contains(string(ev.Tool.Meta), "claudeCode") {
			t.Errorf("row lost its _meta: %s", ev.Tool.Meta)
		}
	}
	rows := h.Snapshot().Sessions[0].Tools
	if len(rows) != 2 || rows[0].Output != "ok  ./...\n✓ done\n" || *rows[0].Exit.ExitCode != 0 ||
		rows[1].Output != "cc -o a\nerror\n" || *rows[1].Exit.ExitCode != 2 {
		t.Errorf("view rows %+v", rows)
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestV2TerminalUpdatesBecomeTerminalEvents: the v2 draft's terminal
// updates map to terminal events of the row whose content names the
// terminal (pieces may merge on the way): a character split across chunks
// arrives whole, a snapshot
// that extends the output reports only the new bytes, one that does not
// replaces it (Reset), the exit ends it, and undecodable data is ext.
func TestV2TerminalUpdatesBecomeTerminalEvents(t *testing.T) {
	check := "✓"
	cfg := agentConfig(t, "v2", terminalScript(
		update(`{"sessionUpdate":"tool_call","toolCallId":"call_7","title":"make","kind":"execute","status":"in_progress",`+
			`"content":[{"type":"terminal","terminalId":"term-7"}]}`),
		update(`{"sessionUpdate":"terminal_update","terminalId":"term-7","command":"make","cwd":"/w"}`),
		update(`{"sessionUpdate":"terminal_output_chunk","terminalId":"term-7","data":"`+b64("a"+check[:1])+`"}`),
		update(`{"sessionUpdate":"terminal_output_chunk","terminalId":"term-7","data":"`+b64(check[1:]+"\n")+`"}`),
		update(`{"sessionUpdate":"terminal_update","terminalId":"term-7","output":{"data":"`+b64("a"+check+"\ntail\n")+`"}}`),
		update(`{"sessionUpdate":"terminal_update","terminalId":"term-7","output":{"data":"`+b64("a"+check+"\ntail\n")+`"}}`),
		update(`{"sessionUpdate":"terminal_output_chunk","terminalId":"term-7","data":"%%%"}`),
		update(`{"sessionUpdate":"terminal_update","terminalId":"term-7","output":{"data":"`+b64("replaced\n")+`"},"exitStatus":{"exitCode":2}}`),
		update(`{"sessionUpdate":"tool_call_update","toolCallId":"call_7","status":"failed"}`),
	))
	got, evs, h := runTerminalTurn(t, cfg)
	sameList(t, got, []string{
		"tool_start:call_7:in_progress",
		`terminal:term-7:call_7:update:""`,
		`terminal:term-7:call_7:update:"a✓\ntail\n"`,
		"ext:",
		`terminal:term-7:call_7:update:"replaced\n":reset`,
		`terminal:term-7:call_7:update:"":exit 2/nil`,
		"tool_end:call_7:failed",
	})
	if !strings.Contains(string(evs[1].Raw), `"command":"make"`) {
		t.Errorf("the command is lost: Raw %s", evs[1].Raw)
	}
	if !strings.Contains(string(evs[3].Raw), `%%%`) {
		t.Errorf("ext lost the update: %s", evs[5].Raw)
	}
	row := h.Snapshot().Sessions[0].Tools[0]
	if row.Output != "replaced\n" || row.Exit == nil || *row.Exit.ExitCode != 2 {
		t.Errorf("view row %+v", row)
	}
}

// TestTermTrackerForgetsOldTerminals: the terminals a session remembers
// are bounded, the oldest forgotten first.
func TestTermTrackerForgetsOldTerminals(t *testing.T) {
	tr := newTermTracker()
	for i := range 3 * maxTrackedTerminals {
		tr.appendOutput(fmt.Sprint("t", i), "", terminalFromUpdate, []byte("x"))
	}
	if len(tr.terms) != maxTrackedTerminals {
		t.Fatalf("%d terminals remembered, want %d", len(tr.terms), maxTrackedTerminals)
	}
	if _, ok := tr.terms[fmt.Sprint("t", 3*maxTrackedTerminals-1)]; !ok {
		t.Error("the newest terminal was forgotten")
	}
	if _, ok := tr.terms["t0"]; ok {
		t.Error("the oldest terminal is still remembered")
	}
}

// TestEventQueueMergesTerminalOutput: waiting output of one terminal folds
// together; an exit, another terminal, another source, an event with Raw
// do not; a Reset piece replaces what it follows; the producer's value is
// not changed.
func TestEventQueueMergesTerminalOutput(t *testing.T) {
	q := newEventQueue(100, 0)
	defer q.close()
	term := func(id, source, data string) Event {
		return Event{Bridge: "a", Key: "k", Kind: KindTerminal, Terminal: &terminal.Output{ID: id, ToolCallID: "c", Source: source, Data: data}}
	}
	q.push(Event{Bridge: "a", Key: "k", Kind: KindTurnStart})
	first := term("t1", "meta", "a")
	q.push(first)
	q.push(term("t1", "meta", "b"))
	q.push(term("t1", "meta", "c"))
	exit := term("t1", "meta", "")
	exit.Terminal.Exit = &acpclient.TerminalExitStatus{}
	q.push(exit)
	q.push(term("t1", "meta", "d"))
	q.push(term("t2", "meta", "e"))
	q.push(term("t2", "update", "f"))
	withRaw := term("t2", "update", "g")
	withRaw.Raw = raw(`{"x":1}`)
	q.push(withRaw)
	q.push(term("t3", "update", "h"))
	reset := term("t3", "update", "i")
	reset.Terminal.Reset, reset.Terminal.Truncated = true, true
	q.push(reset)
	q.push(term("t3", "update", "j"))
	var got []string
	for _, ev := range q.take(nil, 100) {
		got = append(got, describeTerminal(ev))
	}
	sameList(t, got, []string{"turn_start:", `terminal:t1:c:meta:"abc"`, `terminal:t1:c:meta:"":exit nil/nil`,
		`terminal:t1:c:meta:"d"`, `terminal:t2:c:meta:"e"`, `terminal:t2:c:update:"f"`, `terminal:t2:c:update:"g"`,
		`terminal:t3:c:update:"ij":reset`})
	if first.Terminal.Data != "a" {
		t.Errorf("the producer's event was changed: %q", first.Terminal.Data)
	}
}

// TestPumpMergesTerminalOutputWhileConsumerLags: output that waits behind
// a consumer that does not read merges, and every byte arrives in order.
func TestPumpMergesTerminalOutputWhileConsumerLags(t *testing.T) {
	h := NewHost(nil)
	defer h.Close()
	h.events.push(Event{Bridge: "a", Key: "k", Kind: KindTurnStart})
	waitfor.Closed(t, h.Events(), "the host's events to end")
	const pieces = 1000
	var want strings.Builder
	for i := range pieces {
		d := fmt.Sprintln(i)
		want.WriteString(d)
		h.events.push(Event{Bridge: "a", Key: "k", Kind: KindTerminal, Terminal: &terminal.Output{ID: "t", Source: "meta", Data: d}})
	}
	h.events.push(Event{Bridge: "a", Key: "k", Kind: KindTurnEnd})
	var out strings.Builder
	events := 0
	for ev := range h.Events() {
		if ev.Kind == KindTurnEnd {
			break
		}
		events++
		out.WriteString(ev.Terminal.Data)
	}
	if out.String() != want.String() {
		t.Fatal("terminal output lost or reordered")
	}
	if events > pieces/2 {
		t.Errorf("%d terminal events for %d pieces: waiting output did not merge", events, pieces)
	}
}

// TestViewKeepsBoundedTerminalOutputPerRow: a row keeps the last
// toolRowOutputLimit bytes of its output, cut at a character boundary and
// marked truncated; a terminal its content names finds the row without a
// tool call id; a Reset replaces the output and clears the mark.
func TestViewKeepsBoundedTerminalOutputPerRow(t *testing.T) {
	var v SessionView
	v.Apply(Event{Kind: KindTurnStart, Turn: 1})
	v.Apply(Event{Kind: KindToolStart, Turn: 1, Tool: &ToolCall{ID: "c1", Status: "in_progress"}})
	v.Apply(Event{Kind: KindToolStart, Turn: 1, Tool: &ToolCall{ID: "c2", Status: "in_progress",
		Content: []acpclient.ToolCallContent{{Type: acpclient.ToolContentTerminal, TerminalID: "term-2"}}}})
	piece := strings.Repeat("é", 999) + "\n" // 1999 bytes: cuts fall inside characters
	var all strings.Builder
	for range 100 {
		all.WriteString(piece)
		v.Apply(Event{Kind: KindTerminal, Turn: 1, Terminal: &terminal.Output{ID: "c1", ToolCallID: "c1", Source: "meta", Data: piece}})
	}
	v.Apply(Event{Kind: KindTerminal, Turn: 1, Terminal: &terminal.Output{ID: "term-2", Source: "update", Data: "two\n"}})
	v.Apply(Event{Kind: KindTerminal, Turn: 1, Terminal: &terminal.Output{ID: "c1", ToolCallID: "c1", Source: "meta", Data: "end\n",
		Exit: &acpclient.TerminalExitStatus{}}})
	all.WriteString("end\n")
	r := v.Tools[0]
	if len(r.Output) > toolRowOutputLimit || len(r.Output) < toolRowOutputLimit-utf8.UTFMax || !utf8.ValidString(r.Output) ||
		!strings.HasSuffix(all.String(), r.Output) || !r.OutputTruncated || r.Exit == nil {
		t.Fatalf("row 1: %d bytes, valid %v, truncated %v, exit %v", len(r.Output), utf8.ValidString(r.Output), r.OutputTruncated, r.Exit)
	}
	if r := v.Tools[1]; r.Output != "two\n" || r.OutputTruncated {
		t.Fatalf("row 2: %+v", r)
	}
	v.Apply(Event{Kind: KindTerminal, Turn: 1, Terminal: &terminal.Output{ID: "c1", ToolCallID: "c1", Source: "meta", Data: "new\n", Reset: true}})
	if r := v.Tools[0]; r.Output != "new\n" || r.OutputTruncated {
		t.Fatalf("after reset: %q truncated %v", r.Output, r.OutputTruncated)
	}
	snap := v.clone()
	v.Apply(Event{Kind: KindTerminal, Turn: 1, Terminal: &terminal.Output{ID: "c1", ToolCallID: "c1", Source: "meta", Data: "more\n"}})
	if snap.Tools[0].Output != "new\n" {
		t.Error("a clone changed with the view")
	}
}
