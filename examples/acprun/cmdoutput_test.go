package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/terminal"
)

// screen replays what acprun writes to a terminal (text, \r, \n, \b,
// cursor up, erase to the end of the line or screen) and returns the
// lines left on the screen.
func screen(t *testing.T, out string) []string {
	t.Helper()
	lines := []string{""}
	row, col := 0, 0
	put := func(r rune) {
		cur := []rune(lines[row])
		for len(cur) < col {
			cur = append(cur, ' ')
		}
		if col < len(cur) {
			cur[col] = r
		} else {
			cur = append(cur, r)
		}
		lines[row] = string(cur)
		col++
	}
	for i := 0; i < len(out); {
		switch c := out[i]; c {
		case '\r':
			col = 0
		case '\n':
			row, col = row+1, 0
			if row == len(lines) {
				lines = append(lines, "")
			}
		case '\b':
			col = max(0, col-1)
		case 0x1b:
			j := i + 2
			for j < len(out) && (out[j] < 0x40 || out[j] > 0x7e) {
				j++
			}
			n, _ := strconv.Atoi(out[i+2 : j])
			switch out[j] {
			case 'A':
				row = max(0, row-max(n, 1))
			case 'J':
				lines = lines[:row+1]
				fallthrough
			case 'K':
				lines[row] = string([]rune(lines[row])[:min(col, len([]rune(lines[row])))])
			default:
				t.Fatalf("unexpected escape %q", out[i:j+1])
			}
			i = j + 1
			continue
		default:
			r := []rune(out[i:])[0]
			put(r)
			i += len(string(r))
			continue
		}
		i++
	}
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return lines
}

func termEvent(turn uint64, call, data string, exit *acpclient.TerminalExitStatus) bridge.Event {
	return bridge.Event{Kind: bridge.KindTerminal, Turn: turn,
		Terminal: &terminal.Output{ID: "term-" + call, ToolCallID: call, Source: "meta", Data: data, Exit: exit}}
}

// TestHumanShowsCommandOutputInPlace: on a terminal a running command's
// last lines show under its tool row and are redrawn in place with it, an
// unfinished line included; once it ends, the row keeps its last lines and
// the exit status.
func TestHumanShowsCommandOutputInPlace(t *testing.T) {
	var out bytes.Buffer
	h := newHuman(&out, io.Discard, true, palette{})
	tool := &bridge.ToolCall{ID: "c1", Title: "make", Kind: "execute", Status: "in_progress"}
	h.event(bridge.Event{Kind: bridge.KindTurnStart, Turn: 1})
	h.event(bridge.Event{Kind: bridge.KindToolStart, Turn: 1, Tool: tool})
	h.event(termEvent(1, "c1", "cc a.c\ncc b", nil))
	if got := screen(t, out.String()); strings.Join(got, "|") != "▶ make (execute) in progress|    │ cc a.c|    │ cc b" {
		t.Fatalf("while running: %q", got)
	}
	h.event(termEvent(1, "c1", ".c\n\x1b[31mwarning\x1b[0m: x\n50%\r100%\nld\n", nil))
	h.event(termEvent(1, "c1", "error: "+strings.Repeat("y", 200)+"\n", &acpclient.TerminalExitStatus{ExitCode: new(2)}))
	done := *tool
	done.Status = "failed"
	h.event(bridge.Event{Kind: bridge.KindToolEnd, Turn: 1, Tool: &done})
	h.event(bridge.Event{Kind: bridge.KindText, Turn: 1, Text: "It failed."})
	h.event(bridge.Event{Kind: bridge.KindTurnEnd, Turn: 1})
	h.finish()
	want := []string{
		"✗ make (execute) failed",
		"    │ warning: x",
		"    │ 100%",
		"    │ ld",
		"    │ error: " + strings.Repeat("y", shownWidth-len("error: ")-1) + "…",
		"    │ exit 2",
		"It failed.",
		"",
	}
	if got := screen(t, out.String()); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("screen:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestHumanPrintsCommandOutputLines: without a terminal each complete line
// is printed once, indented under the row, the last one at the exit, and a
// failure's exit status after it.
func TestHumanPrintsCommandOutputLines(t *testing.T) {
	var out bytes.Buffer
	h := newHuman(&out, io.Discard, false, palette{})
	tool := &bridge.ToolCall{ID: "c1", Title: "make", Kind: "execute", Status: "in_progress"}
	h.event(bridge.Event{Kind: bridge.KindToolStart, Turn: 1, Tool: tool})
	h.event(termEvent(1, "c1", "one\ntw", nil))
	h.event(termEvent(1, "c1", "o\nthree", nil))
	h.event(termEvent(1, "c1", "", &acpclient.TerminalExitStatus{Signal: new("SIGKILL")}))
	h.finish()
	want := "▶ make (execute) in progress\n    │ one\n    │ two\n    │ three\n    │ killed by SIGKILL\n"
	if out.String() != want {
		t.Fatalf("output:\n%q\nwant:\n%q", out.String(), want)
	}
}

// TestCmdTailIsBounded: a command that prints without end keeps a few
// bounded lines, whatever the length of a line.
func TestCmdTailIsBounded(t *testing.T) {
	var c cmdTail
	for range 1000 {
		c.add(strings.Repeat("é", 5000) + "\n" + strings.Repeat("x", 10000))
	}
	if len(c.lines) != tailLines || c.partial.Len() > maxShownLine {
		t.Fatalf("%d lines, partial %d bytes", len(c.lines), c.partial.Len())
	}
	for _, l := range c.shown() {
		if len(l) > maxShownLine || !strings.HasPrefix(l, "é") && !strings.HasPrefix(l, "x") {
			t.Fatalf("line of %d bytes: %.20q", len(l), l)
		}
	}
}

// With --terminals acprun declares the agents' terminal output extension
// in initialize, and a claude-agent-acp style Bash call's output shows
// under its tool row.
func TestTerminalsFlagShowsCommandOutput(t *testing.T) {
	t.Parallel()
	record := t.TempDir() + "/record"
	script := acptest.WriteScript(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Update: json.RawMessage(`{"sessionUpdate":"tool_call","toolCallId":"toolu_1","title":"go vet ./...","kind":"execute","status":"pending",` +
			`"content":[{"type":"terminal","terminalId":"toolu_1"}],"_meta":{"claudeCode":{"toolName":"Bash"},"terminal_info":{"terminal_id":"toolu_1"}}}`)},
		{Update: json.RawMessage(`{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","_meta":{"terminal_output":{"terminal_id":"toolu_1","data":"vet: a.go:3: bad\nvet: b.go:9: worse\n"}}}`)},
		{Update: json.RawMessage(`{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","status":"failed",` +
			`"_meta":{"claudeCode":{"toolName":"Bash"},"terminal_exit":{"terminal_id":"toolu_1","exit_code":1,"signal":null}}}`)},
		{Text: "vet found two problems"},
	}}}})
	agent := fmt.Sprintf("'%s' -script '%s' -record '%s'", acptest.BuildBinary(t), script, record)
	r := runAcprun(t, "--terminals", "--agent", agent, "--cwd", t.TempDir(), "vet it")
	if r.code != exitOK {
		t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
	}
	want := "○ go vet ./... (execute) pending\n    │ vet: a.go:3: bad\n    │ vet: b.go:9: worse\n    │ exit 1\n✗ go vet ./... (execute) failed\n"
	if !strings.Contains(r.stdout, want) {
		t.Errorf("stdout:\n%s\nwant it to contain:\n%s", r.stdout, want)
	}
	msgs, err := acptest.ReadRecord(record)
	if err != nil {
		t.Fatal(err)
	}
	var init struct {
		ClientCapabilities struct {
			Meta map[string]any `json:"_meta"`
		} `json:"clientCapabilities"`
	}
	if len(msgs) == 0 {
		t.Fatal("nothing recorded")
	}
	if msgs[0].Method != "initialize" || json.Unmarshal(msgs[0].Params, &init) != nil ||
		init.ClientCapabilities.Meta["terminal_output"] != true {
		t.Errorf("initialize did not declare _meta.terminal_output: %d messages, first %s", len(msgs), msgs[0].Params)
	}
}

// With --terminals acprun offers terminal/* and runs what the agent asks
// in the workspace (Build mode); the agent gets the output and exit code,
// and the tool row shows the output. Without the flag the capability is
// not offered and a create is refused.
func TestTerminalsFlagRunsTheAgentsCommands(t *testing.T) {
	t.Parallel()
	script := acptest.WriteScript(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Update: json.RawMessage(`{"sessionUpdate":"tool_call","toolCallId":"run_1","title":"pwd","kind":"execute","status":"in_progress"}`)},
		{Terminal: &acptest.Terminal{Command: "pwd", ToolCallID: "run_1"}},
		{Update: json.RawMessage(`{"sessionUpdate":"tool_call_update","toolCallId":"run_1","status":"completed"}`)},
	}}}})
	for _, terminals := range []bool{true, false} {
		cwd := t.TempDir()
		record := t.TempDir() + "/record"
		agent := fmt.Sprintf("'%s' -script '%s' -record '%s'", acptest.BuildBinary(t), script, record)
		args := []string{"--events", "--agent", agent, "--cwd", cwd, "where am I"}
		if terminals {
			args = append([]string{"--terminals"}, args...)
		}
		r := runAcprun(t, args...)
		if r.code != exitOK {
			t.Fatalf("terminals %v: exit status %d; stderr:\n%s", terminals, r.code, r.stderr)
		}
		resolved, _ := filepath.EvalSymlinks(cwd)
		ran := strings.Contains(r.stdout, `terminal: exit 0 signal none truncated false output \"`+resolved+`\\n\"`)
		if ran != terminals {
			t.Errorf("terminals %v: the command ran %v; stdout:\n%s", terminals, ran, r.stdout)
		}
		msgs, err := acptest.ReadRecord(record)
		if err != nil || len(msgs) == 0 {
			t.Fatalf("record: %v", err)
		}
		var init struct {
			ClientCapabilities struct {
				Terminal bool `json:"terminal"`
			} `json:"clientCapabilities"`
		}
		if json.Unmarshal(msgs[0].Params, &init) != nil || init.ClientCapabilities.Terminal != terminals {
			t.Errorf("terminals %v: initialize offered terminal %v", terminals, init.ClientCapabilities.Terminal)
		}
	}
}

// TestHumanHoldsOutputOfAnUnnamedTerminal: output that comes before a tool
// call names its terminal is not shown on its own (the bridge sends it
// again, as a Reset, for the row that names it), so it shows once, under
// that row; a terminal no row ever names shows its last lines at its exit.
func TestHumanHoldsOutputOfAnUnnamedTerminal(t *testing.T) {
	for _, tty := range []bool{true, false} {
		var out bytes.Buffer
		h := newHuman(&out, io.Discard, tty, palette{})
		tool := &bridge.ToolCall{ID: "c1", Title: "make", Kind: "execute", Status: "in_progress"}
		h.event(bridge.Event{Kind: bridge.KindToolStart, Turn: 1, Tool: tool})
		h.event(bridge.Event{Kind: bridge.KindTerminal, Turn: 1, Terminal: &terminal.Output{ID: "term-1", Source: "client", Data: "line-1\n"}})
		h.event(bridge.Event{Kind: bridge.KindTerminal, Turn: 1, Terminal: &terminal.Output{ID: "term-1", ToolCallID: "c1", Source: "client", Reset: true, Data: "line-1\n"}})
		h.event(bridge.Event{Kind: bridge.KindTerminal, Turn: 1, Terminal: &terminal.Output{ID: "term-1", ToolCallID: "c1", Source: "client", Data: "line-2\n",
			Exit: &acpclient.TerminalExitStatus{ExitCode: new(0)}}})
		h.event(bridge.Event{Kind: bridge.KindTerminal, Turn: 1, Terminal: &terminal.Output{ID: "term-2", Source: "client", Data: "a\nb\n"}})
		h.event(bridge.Event{Kind: bridge.KindTerminal, Turn: 1, Terminal: &terminal.Output{ID: "term-2", Source: "client", Data: "c",
			Exit: &acpclient.TerminalExitStatus{ExitCode: new(3)}}})
		h.finish()
		got := strings.Join(screen(t, out.String()), "\n")
		if strings.Count(got, "line-1") != 1 || !strings.Contains(got, "▶ make (execute) in progress\n    │ line-1\n    │ line-2") {
			t.Errorf("tty=%v: screen:\n%s\nwant line-1 once, under the row", tty, got)
		}
		if !strings.Contains(got, "    │ a\n    │ b\n    │ c\n    │ exit 3") {
			t.Errorf("tty=%v: screen:\n%s\nwant the unnamed terminal's lines and exit at its end", tty, got)
		}
	}
}
