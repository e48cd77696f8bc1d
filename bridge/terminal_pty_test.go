//go:build unix

package bridge

import (
	"testing"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge/terminal"
)

// TestTerminalPTY: with terminal.Options.PTY a local command's output is a
// terminal, which it sees (isatty) and which ends its lines with CR LF;
// without, a pipe.
func TestTerminalPTY(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Terminal: &acptest.Terminal{Command: "sh", Args: []string{"-c", `if [ -t 1 ]; then echo tty; else echo pipe; fi`}}},
	}}}}
	for pty, want := range map[bool]string{
		true:  `terminal: exit 0 signal none truncated false output "tty\r\n"`,
		false: `terminal: exit 0 signal none truncated false output "pipe\n"`,
	} {
		f := newTermFixture(t, script, Policy{Mode: ModeBuild}, &terminal.Options{PTY: pty})
		f.prompt(t, "run")
		if got := f.report("terminal:"); got != want {
			t.Errorf("PTY %v:\n got %s\nwant %s", pty, got, want)
		}
	}
}
