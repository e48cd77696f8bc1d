package bridge

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/internal/waitfor"
)

// termSession is the session id the fake agent gives its first session.
const termSession = "sess_1"

// termRequest is a step sending a terminal/* request for the first
// session; the agent reports the answer as "request METHOD: …".
func termRequest(method string, params map[string]any) acptest.Step {
	params["sessionId"] = termSession
	b, _ := json.Marshal(params)
	return acptest.Step{Request: &acptest.Request{Method: method, Params: b}}
}

// onTerminal is a step calling method on terminal id.
func onTerminal(method, id string) acptest.Step {
	return termRequest(method, map[string]any{"terminalId": id})
}

// shell is a terminal/create step running script with /bin/sh.
func shell(script string) acptest.Step {
	return termRequest("terminal/create", map[string]any{"command": "/bin/sh", "args": []string{"-c", script}})
}

// termFixture is a host with one bridge serving terminals to the fake
// agent, and one session in a temporary directory.
type termFixture struct {
	h     *Host
	rec   *recorder
	b     *Bridge
	s     *Session
	dir   string
	turns uint64
}

func newTermFixture(t *testing.T, script acptest.Script, policy Policy, opts *terminal.Options) *termFixture {
	t.Helper()
	if opts == nil {
		opts = &terminal.Options{}
	}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(waitfor.Context(t), Config{ID: "term", Transport: &acptest.Transport{Script: script}, Terminals: opts})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: dir, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	return &termFixture{h: h, rec: rec, b: b, s: s, dir: dir}
}

// prompt runs a turn, bounded, and waits until the recorder has its end,
// so every report of the turn is in the recorder.
func (f *termFixture) prompt(t *testing.T, text string) {
	t.Helper()
	if _, err := f.s.Prompt(waitfor.Context(t), acpclient.TextBlock(text)); err != nil {
		t.Fatalf("prompt %q: %v", text, err)
	}
	f.turns++
	f.rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Key == f.s.Key() && ev.Turn == f.turns })
}

// report waits for the agent's report that starts with prefix.
func (f *termFixture) report(prefix string) string {
	return f.rec.waitFor(prefix, func(ev Event) bool { return ev.Kind == KindText && strings.HasPrefix(ev.Text, prefix) }).Text
}

// reports returns the agent's reports about method, in order.
func (f *termFixture) reports(method string) []string {
	var out []string
	for _, ev := range f.rec.snapshot() {
		if ev.Kind == KindText && strings.HasPrefix(ev.Text, "request "+method+":") {
			out = append(out, ev.Text)
		}
	}
	return out
}

// TestTerminalCapabilityFollowsTheOption: terminal: true is advertised
// exactly when Config.Terminals is set.
func TestTerminalCapabilityFollowsTheOption(t *testing.T) {
	for _, on := range []bool{false, true} {
		tr := &acptest.Transport{}
		cfg := Config{ID: "caps", Transport: tr}
		if on {
			cfg.Terminals = &terminal.Options{}
		}
		h, _ := newHostAndRecorder(t, nil)
		if _, err := h.Start(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		init, err := tr.Agents()[0].WaitFor(context.Background(), acptest.Method("initialize"))
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			ClientCapabilities struct {
				Terminal bool `json:"terminal"`
			} `json:"clientCapabilities"`
		}
		if err := json.Unmarshal(init.Params, &p); err != nil {
			t.Fatal(err)
		}
		if p.ClientCapabilities.Terminal != on {
			t.Errorf("Terminals set %v: advertised terminal %v", on, p.ClientCapabilities.Terminal)
		}
	}
}

// TestTerminalEveryMethod: create runs the command without a shell, in the
// session's cwd, with the base environment plus the agent's variables and
// nothing else of ours; wait_for_exit and output give its exit code and
// stdout and stderr in order; kill of an ended command is harmless; after
// release the id is refused.
func TestTerminalEveryMethod(t *testing.T) {
	t.Setenv("ACPHOST_TEST_SECRET", "hunter2")
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		termRequest("terminal/create", map[string]any{"command": "sh", "args": []string{"-c",
			`echo out; echo err >&2; echo "pwd=$(pwd -P) foo=$FOO term=$TERM secret=$ACPHOST_TEST_SECRET"; exit 7`, "$(not expanded)"},
			"env": []map[string]string{{"name": "FOO", "value": "bar baz"}}}),
		onTerminal("terminal/wait_for_exit", "term-1"),
		onTerminal("terminal/output", "term-1"),
		onTerminal("terminal/kill", "term-1"),
		onTerminal("terminal/release", "term-1"),
		onTerminal("terminal/output", "term-1"),
		onTerminal("terminal/wait_for_exit", "term-1"),
	}}}}
	eachRunner(t, func(t *testing.T, r termRunner) {
		f := newTermFixture(t, script, Policy{Mode: ModeBuild}, r.opts(t))
		f.prompt(t, "run")
		resolved, _ := filepath.EvalSymlinks(f.dir)
		want := map[string][]string{
			"terminal/create":        {`result {"terminalId":"term-1"}`},
			"terminal/wait_for_exit": {`result {"exitCode":7}`, `error -32602 terminal "term-1" of session "sess_1" is unknown or was released`},
			"terminal/output": {`result {"output":"out\nerr\npwd=` + resolved + ` foo=bar baz term=dumb secret=\n","truncated":false,"exitStatus":{"exitCode":7}}`,
				`error -32602 terminal "term-1" of session "sess_1" is unknown or was released`},
			"terminal/kill":    {`result {}`},
			"terminal/release": {`result {}`},
		}
		for method, answers := range want {
			got := f.reports(method)
			if len(got) != len(answers) {
				t.Errorf("%s answered %q, want %d answers", method, got, len(answers))
				continue
			}
			for i, a := range answers {
				if got[i] != "request "+method+": "+a {
					t.Errorf("%s answer %d:\n got %s\nwant %s", method, i, got[i], a)
				}
			}
		}
	})
}

// TestTerminalTruncatesAtCharacterBoundary: output over outputByteLimit
// loses its start, never half a character, and says so.
func TestTerminalTruncatesAtCharacterBoundary(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Terminal: &acptest.Terminal{Command: "printf", Args: []string{"%s", "aé€😀aé€😀"}, OutputByteLimit: 6}},
	}}}}
	eachRunner(t, func(t *testing.T, r termRunner) {
		f := newTermFixture(t, script, Policy{Mode: ModeFull}, r.opts(t))
		f.prompt(t, "run")
		// "aé€😀" is 1+2+3+4 bytes; the last 6 bytes start at the second of
		// "€", so only the emoji's 4 bytes can stay.
		got := f.report("terminal:")
		if want := `terminal: exit 0 signal none truncated true output "😀"`; got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}

// TestTerminalRefusedOutsideBuildAndFull: Ask, Plan and read-only refuse
// terminal/create with an error naming the mode; Build and Full run the
// command without asking the app.
func TestTerminalRefusedOutsideBuildAndFull(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Terminal: &acptest.Terminal{Command: "echo", Args: []string{"ran"}}},
	}}}}
	eachRunner(t, func(t *testing.T, r termRunner) {
		for _, tt := range []struct {
			policy Policy
			want   string
		}{
			{Policy{Mode: ModeAsk}, "terminal: terminal/create error -32603 running echo refused: the session is read-only (Ask mode)"},
			{Policy{Mode: ModePlan}, "terminal: terminal/create error -32603 running echo refused: the session is read-only (Plan mode)"},
			{Policy{Mode: ModeFull, ReadOnly: true}, "terminal: terminal/create error -32603 running echo refused: the session is read-only (read-only tool policy)"},
			{Policy{Mode: ModeBuild}, `terminal: exit 0 signal none truncated false output "ran\n"`},
			{Policy{Mode: ModeFull}, `terminal: exit 0 signal none truncated false output "ran\n"`},
		} {
			t.Run(string(tt.policy.Mode)+map[bool]string{true: "-readonly"}[tt.policy.ReadOnly], func(t *testing.T) {
				f := newTermFixture(t, script, tt.policy, r.opts(t))
				f.prompt(t, "run")
				if got := f.report("terminal:"); !strings.HasPrefix(got, tt.want) {
					t.Errorf("got  %s\nwant %s…", got, tt.want)
				}
				if askedApp(f.rec.snapshot()) {
					t.Error("the app was asked")
				}
			})
		}
	})
}

// TestTerminalCwdConfined: a cwd inside the session's cwd or a granted
// directory runs; one outside, or a symlink inside that leads outside, is
// refused.
func TestTerminalCwdConfined(t *testing.T) {
	outside, granted := t.TempDir(), t.TempDir()
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		termRequest("terminal/create", map[string]any{"command": "true", "cwd": "CWD/sub"}),
		termRequest("terminal/create", map[string]any{"command": "true", "cwd": granted}),
		termRequest("terminal/create", map[string]any{"command": "true", "cwd": outside}),
		termRequest("terminal/create", map[string]any{"command": "true", "cwd": "CWD/link"}),
		termRequest("terminal/create", map[string]any{"command": "true", "cwd": "CWD/../.."}),
		termRequest("terminal/create", map[string]any{"command": "true", "cwd": "relative"}),
	}}}}
	dir := t.TempDir()
	for i, st := range script.Prompts[0].Steps {
		script.Prompts[0].Steps[i].Request.Params = []byte(strings.ReplaceAll(string(st.Request.Params), "CWD", dir))
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	eachRunner(t, func(t *testing.T, r termRunner) {
		h, rec := newHostAndRecorder(t, nil)
		b, _ := h.Start(context.Background(), Config{ID: "cwd", Transport: &acptest.Transport{Script: script}, Terminals: r.opts(t)})
		s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: dir, ExternalDirectories: []string{granted}, Policy: Policy{Mode: ModeBuild}})
		if err != nil {
			t.Fatal(err)
		}
		f := &termFixture{rec: rec, s: s}
		f.prompt(t, "go")
		got := f.reports("terminal/create")
		want := []string{
			`result {"terminalId":"term-1"}`,
			`result {"terminalId":"term-2"}`,
			`error -32602 terminal cwd ` + outside + ` refused: outside the session's directories`,
			`error -32602 terminal cwd ` + dir + `/link refused: outside the session's directories`,
			`error -32602 terminal cwd ` + filepath.Dir(filepath.Dir(dir)) + ` refused: outside the session's directories`,
			`error -32602 terminal cwd "relative" is not an absolute path`,
		}
		if len(got) != len(want) {
			t.Fatalf("answers %q", got)
		}
		for i := range want {
			if got[i] != "request terminal/create: "+want[i] {
				t.Errorf("answer %d:\n got %s\nwant %s", i, got[i], want[i])
			}
		}
	})
}

// TestTerminalEvents: the output arrives as terminal events of the
// terminal's id, in order, followed by one with the exit status.
func TestTerminalEvents(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Terminal: &acptest.Terminal{Command: "/bin/sh", Args: []string{"-c", `for i in 1 2 3; do echo line $i; sleep 0.01; done; echo é >&2; exit 2`}, ToolCallID: "call_1"}},
	}}}}
	eachRunner(t, func(t *testing.T, r termRunner) {
		f := newTermFixture(t, script, Policy{Mode: ModeBuild}, r.opts(t))
		f.prompt(t, "run")
		f.rec.waitFor("exit event", func(ev Event) bool { return ev.Kind == KindTerminal && ev.Terminal.Exit != nil })
		var data strings.Builder
		var exits int
		for _, ev := range f.rec.snapshot() {
			if ev.Kind != KindTerminal {
				continue
			}
			tr := ev.Terminal
			if tr.ID != "term-1" || tr.Source != "client" || tr.Truncated || ev.Key != f.s.Key() {
				t.Errorf("terminal event %+v of session %s", tr, ev.Key)
			}
			if exits > 0 {
				t.Errorf("event after the exit: %+v", tr)
			}
			if !utf8.ValidString(tr.Data) {
				t.Errorf("event data %q splits a character", tr.Data)
			}
			if tr.Reset { // sent again for the row, once the tool call named it
				data.Reset()
			}
			data.WriteString(tr.Data)
			if tr.Exit != nil {
				exits++
				if tr.Exit.ExitCode == nil || *tr.Exit.ExitCode != 2 {
					t.Errorf("exit %+v, want code 2", tr.Exit)
				}
				// The tool call that named the terminal in its content (sent
				// right after create) is the row that shows it.
				if tr.ToolCallID != "call_1" {
					t.Errorf("exit event for tool call %q, want call_1", tr.ToolCallID)
				}
			}
		}
		if want := "line 1\nline 2\nline 3\né\n"; data.String() != want {
			t.Errorf("events carried %q, want %q", data.String(), want)
		}
	})
}
