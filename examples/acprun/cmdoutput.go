package main

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
)

const (
	// tailLines is how many of a command's last lines show under its tool
	// row on a terminal, while it runs and once it ended.
	tailLines = 4
	// maxShownLine bounds an output line kept for showing, in bytes; the
	// rest of a longer line is dropped.
	maxShownLine = 512
	// outputIndent starts each output line under its tool row.
	outputIndent = "    │ "
	// shownWidth is how many characters of an output line show under its
	// row on a terminal: with the indent, within 80 columns, so that no
	// line wraps and the block can be rewritten in place.
	shownWidth = 72
)

// cmdTail is the end of a command's output for its tool row: the last
// complete lines and the one being written, each bounded, so a command
// that prints without end costs a few hundred bytes.
type cmdTail struct {
	lines   []string
	partial strings.Builder
	exit    string // "exit 2", "killed by SIGTERM"; "" while it runs or for success
}

// add takes a piece of output and returns the lines it completed.
func (c *cmdTail) add(data string) []string {
	var done []string
	for {
		i := strings.IndexByte(data, '\n')
		if i < 0 {
			c.keep(data)
			return done
		}
		c.keep(data[:i])
		done = append(done, c.complete())
		data = data[i+1:]
	}
}

// keep appends to the line being written, up to the bound.
func (c *cmdTail) keep(s string) {
	if room := maxShownLine - c.partial.Len(); room > 0 {
		if len(s) > room {
			for room > 0 && !utf8.RuneStart(s[room]) {
				room-- // cut at a character boundary
			}
			s = s[:room]
		}
		c.partial.WriteString(s)
	}
}

// complete ends the line being written and returns it, cleaned.
func (c *cmdTail) complete() string {
	line := cleanLine(c.partial.String())
	c.partial.Reset()
	c.lines = append(c.lines, line)
	if len(c.lines) > tailLines {
		c.lines = append(c.lines[:0], c.lines[len(c.lines)-tailLines:]...)
	}
	return line
}

// end flushes an unfinished last line and records how the command ended.
func (c *cmdTail) end(st *acpclient.TerminalExitStatus) []string {
	var done []string
	if c.partial.Len() > 0 {
		done = append(done, c.complete())
	}
	switch {
	case st.Signal != nil && *st.Signal != "":
		c.exit = "killed by " + *st.Signal
	case st.ExitCode != nil && *st.ExitCode != 0:
		c.exit = fmt.Sprintf("exit %d", *st.ExitCode)
	}
	return done
}

func (c *cmdTail) reset() {
	c.lines, c.exit = c.lines[:0], ""
	c.partial.Reset()
}

// shown returns the lines under the row, the line being written last.
func (c *cmdTail) shown() []string {
	lines := c.lines
	if c.partial.Len() > 0 {
		lines = append(lines[:len(lines):len(lines)], cleanLine(c.partial.String()))
		lines = lines[max(0, len(lines)-tailLines):]
	}
	return lines
}

// cleanLine makes a line of command output safe to print: what follows
// its last carriage return (a progress bar's latest state), without
// escape sequences and control characters, valid UTF-8.
func cleanLine(s string) string {
	if i := strings.LastIndexByte(s, '\r'); i >= 0 {
		s = s[i+1:]
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b:
			i += escapeLen(s[i:])
			continue
		case r == '\t':
			b.WriteByte(' ')
		case !unicode.IsControl(r):
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// escapeLen is the length of the escape sequence s starts with: CSI
// ("\x1b[" … final byte), OSC ("\x1b]" … BEL or ST) or a two-byte one.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		for i := 2; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
		}
	case ']':
		for i := 2; i < len(s); i++ {
			if s[i] == '\a' {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
	default:
		return 2
	}
	return len(s)
}

// terminal shows a piece of a command's output, or its end, under its
// tool row: on a terminal the row's last lines are redrawn in place with
// the row; otherwise each line is printed, indented, once it is complete,
// and the exit status when it is not a success. h.mu is held.
func (h *human) terminal(ev bridge.Event) {
	t := ev.Terminal
	if t == nil {
		return
	}
	row := "terminal:" + t.ID // output of a terminal no tool call names
	if t.ToolCallID != "" {
		row = toolRow(ev.Turn, t.ToolCallID)
		// Output held while no row named the terminal comes again, in
		// the bridge's Reset for this row: forget it so it shows once.
		delete(h.tails, "terminal:"+t.ID)
	}
	tail := h.tails[row]
	if tail == nil {
		tail = &cmdTail{}
		h.tails[row] = tail
	}
	if t.Reset {
		tail.reset()
	}
	done := tail.add(t.Data)
	if t.ToolCallID == "" {
		// A tool call may still name the terminal, and its output then
		// goes under that row: until the exit only the tail's last lines
		// are kept, then shown.
		if t.Exit == nil {
			return
		}
		tail.end(t.Exit)
		done = tail.lines
	} else if t.Exit != nil {
		done = append(done, tail.end(t.Exit)...)
	}
	if h.tty {
		head, ok := h.toolLines[row]
		if !ok {
			head = h.colors.dim("terminal " + t.ID)
		}
		h.line(row, head+h.tailBlock(row))
		return
	}
	for _, l := range done {
		h.newline()
		h.write(h.colors.dim(outputIndent) + l + "\n")
	}
	if t.Exit != nil && tail.exit != "" {
		h.newline()
		h.write(h.colors.dim(outputIndent) + h.colors.red(tail.exit) + "\n")
	}
	if t.Exit != nil {
		delete(h.tails, row)
	}
}

// tailBlock is what shows under a row on a terminal: its command's last
// lines and how it ended, each on a line of its own. h.mu is held.
func (h *human) tailBlock(row string) string {
	tail := h.tails[row]
	if !h.tty || tail == nil {
		return ""
	}
	var b strings.Builder
	for _, l := range tail.shown() {
		b.WriteString("\n" + h.colors.dim(outputIndent) + clip(l, shownWidth))
	}
	if tail.exit != "" {
		b.WriteString("\n" + h.colors.dim(outputIndent) + h.colors.red(tail.exit))
	}
	return b.String()
}

// clip shortens s to n characters, marking the cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
