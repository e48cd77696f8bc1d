//go:build unix

package acpclient

import (
	"context"
	"testing"
)

// TestStartPTY: with PTY the command's stdout and stderr are a terminal
// (stdin is not: it stays empty), the output has a terminal's CR LF line
// ends, and Read ends at the command's exit; without, they are a pipe.
func TestStartPTY(t *testing.T) {
	script := `[ -t 1 ] && echo out-tty; [ -t 2 ] && echo err-tty >&2; [ -t 0 ] || echo stdin-not-tty; read x && echo read "$x"; echo cols $(stty size <&2 2>/dev/null | cut -d" " -f2)`
	for _, tt := range []struct {
		pty  bool
		want string
	}{
		{true, "out-tty\r\nerr-tty\r\nstdin-not-tty\r\ncols 80\r\n"},
		{false, "stdin-not-tty\ncols\n"},
	} {
		c, err := (&CommandTransport{Path: "/bin/sh", Args: []string{"-c", script}, PTY: tt.pty}).Start(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out, err := readAllErr(t, c)
		if err != nil {
			t.Errorf("pty %v: read: %v", tt.pty, err)
		}
		if string(out) != tt.want {
			t.Errorf("pty %v: output %q, want %q", tt.pty, out, tt.want)
		}
		if st := waitStatus(t, c); st.ExitCode == nil || *st.ExitCode != 0 {
			t.Errorf("pty %v: status %+v", tt.pty, st)
		}
		c.Close()
	}
}
