package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/acphost/acphost/bridge"
)

// labelled prints whole lines, each prefixed with its agent's label. Text
// streams in pieces, so each agent's unfinished line waits in partial
// until its newline, its next message or its next non-text event arrives.
type labelled struct {
	w       io.Writer
	partial map[string]string // by bridge id; only the event goroutine uses it
	message map[string]string // the id of each agent's message being shown, if it has one

	mu     sync.Mutex
	labels map[string]string // by bridge id, unique
	width  int               // of the widest label
}

// name gives the agent with bridge id its label, numbered ("Claude Code
// 2") when another agent has it already.
func (l *labelled) name(id, label string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	taken := func(s string) bool {
		for _, have := range l.labels {
			if have == s {
				return true
			}
		}
		return false
	}
	unique := label
	for i := 2; taken(unique); i++ {
		unique = fmt.Sprintf("%s %d", label, i)
	}
	l.labels[id] = unique
	l.width = max(l.width, utf8.RuneCountInString(unique))
}

// label returns the label of the agent with bridge id (its id until it
// has one).
func (l *labelled) label(id string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if label, ok := l.labels[id]; ok {
		return label
	}
	return id
}

func (l *labelled) show(ev bridge.Event) {
	switch ev.Kind {
	case bridge.KindText:
		if ev.MessageID != l.message[ev.Bridge] {
			l.end(ev.Bridge) // a new message starts a new line
			l.message[ev.Bridge] = ev.MessageID
		}
		l.text(ev.Bridge, ev.Text)
		return
	case bridge.KindThinking, bridge.KindPlan, bridge.KindTodos, bridge.KindToolUpdate:
		// Not shown, but they come between two messages: the next text is
		// another message, not the rest of this one.
		l.end(ev.Bridge)
	case bridge.KindToolStart, bridge.KindToolEnd:
		l.end(ev.Bridge)
		l.println(ev.Bridge, fmt.Sprintf("[tool %s: %s]", ev.Tool.Status, ev.Tool.Title))
	case bridge.KindPermission:
		l.end(ev.Bridge)
		l.println(ev.Bridge, fmt.Sprintf("[permission for %s: allowed]", ev.Tool.Title))
		ev.Permission.Allow()
	case bridge.KindTurnEnd:
		l.end(ev.Bridge)
		l.println(ev.Bridge, "[turn ended: "+ev.StopReason+"]")
	case bridge.KindError:
		l.end(ev.Bridge)
		l.println(ev.Bridge, fmt.Sprintf("[error: %v]", ev.Err))
	}
}

func (l *labelled) text(agent, text string) {
	buf := l.partial[agent] + text
	for {
		i := strings.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		l.println(agent, buf[:i])
		buf = buf[i+1:]
	}
	l.partial[agent] = buf
}

// end prints the agent's unfinished line, if any.
func (l *labelled) end(agent string) {
	if rest := l.partial[agent]; rest != "" {
		l.println(agent, rest)
		l.partial[agent] = ""
	}
}

func (l *labelled) println(agent, line string) {
	label := l.label(agent)
	l.mu.Lock()
	pad := max(l.width+1, 8) - utf8.RuneCountInString(label) // at least one space before the bar
	l.mu.Unlock()
	fmt.Fprintf(l.w, "%s%s│ %s\n", label, strings.Repeat(" ", max(pad, 1)), line)
}

// flush prints every unfinished line.
func (l *labelled) flush() {
	for agent := range l.partial {
		l.end(agent)
	}
}
