package main

import (
	"strings"

	"github.com/acphost/acphost/bridge"
)

// text shows a piece of the agent's reply. A reply that follows other
// output starts on a line of its own, without the newlines it may begin
// with (an agent that ends a line it never started would leave a blank
// one), and a new message of the agent (another MessageID) is set apart
// from the one before by a blank line rather than glued to it. h.mu is
// held.
func (h *human) text(ev bridge.Event) {
	s, fresh := h.startPiece("text", ev)
	if fresh {
		h.newline()
	}
	if s == "" {
		return
	}
	h.write(s)
	h.block = "text"
}

// thinking shows a piece of the agent's reasoning, dimmed, the way text
// shows a reply: each message of it on a line of its own, after
// "thinking: ". h.mu is held.
func (h *human) thinking(ev bridge.Event) {
	s, fresh := h.startPiece("thinking", ev)
	if s == "" {
		return
	}
	if fresh {
		h.newline()
		h.write(h.colors.dim("thinking: "))
	}
	h.write(h.colors.dim(s))
	h.block = "thinking"
}

// startPiece returns the piece of ev to show in a block of kind, and
// whether it starts a new block: it does after other output, and after
// another message of the same kind, which is then ended by a blank line.
// A new block's leading newlines are dropped. h.mu is held.
func (h *human) startPiece(kind string, ev bridge.Event) (string, bool) {
	previous := h.messageID
	h.messageID = ev.MessageID
	switch {
	case h.block != kind:
	case previous != "" && ev.MessageID != "" && previous != ev.MessageID:
		h.newline()
		h.write("\n")
		h.block = ""
	default:
		return ev.Text, false
	}
	return strings.TrimLeft(ev.Text, "\n"), true
}
