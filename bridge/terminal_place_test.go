package bridge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/waitfor"
)

// TestTerminalOutputPlacedOnceNamed: a command's output and exit that went
// out before the agent's tool update named the terminal are sent again for
// that row (Reset), so a view shows them in it; a terminal named while it
// runs gets the same, and then its live output in the row.
func TestTerminalOutputPlacedOnceNamed(t *testing.T) {
	row := func(id string) acptest.Step {
		return acptest.Step{Update: json.RawMessage(`{"sessionUpdate":"tool_call","toolCallId":"` + id + `","title":"run","kind":"execute","status":"in_progress"}`)}
	}
	name := func(id, term string) acptest.Step {
		return acptest.Step{Update: json.RawMessage(`{"sessionUpdate":"tool_call_update","toolCallId":"` + id + `","content":[{"type":"terminal","terminalId":"` + term + `"}]}`)}
	}
	// The agent holds on gate terminals until the test has seen what it
	// waits for: all in one turn, so the view keeps the rows.
	gate := func(name string) []acptest.Step {
		return []acptest.Step{shell(`read x <` + name), onTerminal("terminal/wait_for_exit", "term-"+map[string]string{"gate1": "2", "gate2": "4"}[name])}
	}
	steps := []acptest.Step{row("call_done"), row("call_live"), shell(`echo first; echo second`), onTerminal("terminal/wait_for_exit", "term-1")}
	steps = append(steps, gate("gate1")...)
	steps = append(steps, name("call_done", "term-1"), shell(`echo early; read x <fifo; echo late`))
	steps = append(steps, gate("gate2")...)
	steps = append(steps, name("call_live", "term-3"), onTerminal("terminal/wait_for_exit", "term-3"))
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: steps}}}
	unnamed := func(id string, exit bool) func(Event) bool {
		return func(ev Event) bool {
			tr := ev.Terminal
			return ev.Kind == KindTerminal && tr.ID == id && tr.ToolCallID == "" && (tr.Exit != nil) == exit
		}
	}
	eachRunner(t, func(t *testing.T, r termRunner) {
		f := newTermFixture(t, script, Policy{Mode: ModeBuild}, r.opts(t))
		for _, name := range []string{"gate1", "gate2", "fifo"} {
			if err := syscall.Mkfifo(filepath.Join(f.dir, name), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		open := func(name string) {
			t.Helper()
			if err := os.WriteFile(filepath.Join(f.dir, name), []byte("go\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		turn := make(chan error, 1)
		go func() {
			_, err := f.s.Prompt(waitfor.Context(t), acpclient.TextBlock("run"))
			turn <- err
		}()
		f.rec.waitFor("term-1's exit, unnamed", unnamed("term-1", true))
		open("gate1")
		f.rec.waitFor("term-3's first output, unnamed", unnamed("term-3", false))
		open("gate2")
		f.rec.waitFor("term-3 placed", func(ev Event) bool {
			return ev.Kind == KindTerminal && ev.Terminal.ID == "term-3" && ev.Terminal.ToolCallID == "call_live" && ev.Terminal.Reset
		})
		open("fifo")
		if err := <-turn; err != nil {
			t.Fatal(err)
		}
		f.rec.waitFor("term-3's exit", func(ev Event) bool {
			return ev.Kind == KindTerminal && ev.Terminal.ID == "term-3" && ev.Terminal.Exit != nil
		})
		var v SessionView
		for _, ev := range f.rec.snapshot() {
			if ev.Key == f.s.Key() {
				v.Apply(ev)
			}
		}
		for id, want := range map[string]string{"call_done": "first\nsecond\n", "call_live": "early\nlate\n"} {
			i := v.findRow(id, 0, true)
			if i < 0 {
				t.Fatalf("no row %s", id)
			}
			if got := v.Tools[i]; got.Output != want || got.Exit == nil || got.Exit.ExitCode == nil || *got.Exit.ExitCode != 0 {
				t.Errorf("row %s: output %q exit %+v, want %q and exit 0", id, got.Output, got.Exit, want)
			}
		}
	})
}
