package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acphost/acphost/acpclient"
)

// A transcript fork is the explicit fallback for an agent that cannot
// fork, or cannot fork at the point asked (ForkOptions.Transcript): a new
// native session (session/new) that knows nothing of the parent, whose
// first prompt carries a transcript of the parent's turns before the fork
// point, read from the journal, ahead of the app's own content. It is
// said everywhere: ForkOrigin.Transcript in the record, the session event
// and the list, and the transcript itself, between transcriptStart and
// transcriptEnd, in the first turn's turn_start text. The agent gets the
// conversation as text only: not its tool results, not its own state.

const (
	// transcriptStart opens the transcript block of a transcript fork's
	// first prompt; transcriptEnd closes it.
	transcriptStart = "[Transcript of an earlier conversation, given as context only. It is not a request: the request is the message after the transcript.]"
	transcriptEnd   = "[End of the transcript.]"
	// maxTranscriptBytes bounds the transcript; the oldest turns are left
	// out, saying so, to stay under it.
	maxTranscriptBytes = 64 << 10
)

// seedContent returns the content of a Prompt: for a transcript fork that
// has run no turn yet, its transcript ahead of content.
func (tr *sessionTurns) seedContent(content []acpclient.ContentBlock) []acpclient.ContentBlock {
	s := tr.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seed == "" || s.fork == nil || s.turns.started != s.fork.AfterTurn {
		return content
	}
	return append([]acpclient.ContentBlock{acpclient.TextBlock(s.seed)}, content...)
}

// transcriptOf renders the session's turns up to and including turn
// last, for a transcript fork of it, as the Host's subscribers see them:
// with the turns it inherited, and with those of this process, whose end
// may still be on its way to the journal (it waits for the turn_end of the
// last turn that ended here).
func (r *sessionRecords) transcriptOf(ctx context.Context, last uint64) (string, error) {
	s := r.s
	h := s.b.host
	if h.journal == nil {
		return "", errNoJournalForTranscript
	}
	s.mu.Lock()
	lastEnded := s.ctl.lastTurn
	s.mu.Unlock()
	sub, cancel := context.WithCancel(ctx)
	defer cancel()
	var t transcriptBuilder
	caught, ended := false, lastEnded == 0
	for ev, err := range h.Subscribe(sub, Cursor{Key: s.key, CaughtUp: func(uint64) {
		caught = true
		if ended {
			cancel()
		}
	}}) {
		if err != nil {
			return "", fmt.Errorf("reading the history of session %s: %w", s.key, err)
		}
		t.add(&ev, last)
		if ev.Kind == KindTurnEnd && ev.Key == s.key && ev.Turn == lastEnded {
			ended = true
			if caught {
				break
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return t.String(), nil
}

// journalTranscript is transcriptOf read from the journal alone, for a
// transcript fork opened again before its first turn.
func journalTranscript(ctx context.Context, j Journal, key string, last uint64) (string, error) {
	if j == nil {
		return "", errNoJournalForTranscript
	}
	var t transcriptBuilder
	for ev, err := range History(ctx, j, key) {
		if err != nil {
			return "", fmt.Errorf("reading the history of session %s: %w", key, err)
		}
		t.add(&ev, last)
	}
	return t.String(), nil
}

// errNoJournalForTranscript: a transcript is read from the journal.
var errNoJournalForTranscript = errors.New("a transcript fork reads the parent's history from the Host's journal, and the Host has none")

// transcriptBuilder collects the turns of a transcript, in the order they
// come.
type transcriptBuilder struct {
	turns map[uint64]*turnTranscript
	order []uint64
}

// add takes ev into the transcript when it belongs to a turn up to last.
func (tb *transcriptBuilder) add(ev *Event, last uint64) {
	if ev.Turn == 0 || ev.Turn > last || ev.Replay {
		return
	}
	if tb.turns == nil {
		tb.turns = map[uint64]*turnTranscript{}
	}
	t := tb.turns[ev.Turn]
	if t == nil {
		t = &turnTranscript{}
		tb.turns[ev.Turn] = t
		tb.order = append(tb.order, ev.Turn)
	}
	t.add(ev)
}

// String is the transcript between its markers, the newest turns kept
// when it is too long; "" when it holds no turn.
func (tb *transcriptBuilder) String() string {
	if len(tb.order) == 0 {
		return ""
	}
	var parts []string
	size := 0
	for i := len(tb.order) - 1; i >= 0; i-- {
		t := tb.turns[tb.order[i]].String()
		if size+len(t) > maxTranscriptBytes {
			parts = append(parts, fmt.Sprintf("[Turns up to %d left out: the transcript is limited to %d KiB.]\n", tb.order[i], maxTranscriptBytes>>10))
			break
		}
		size += len(t)
		parts = append(parts, t)
	}
	var b strings.Builder
	b.WriteString(transcriptStart + "\n")
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString(parts[i])
	}
	b.WriteString(transcriptEnd)
	return b.String()
}

// turnTranscript is the transcript of one turn: the user's message, the
// agent's text and one line per finished tool call. Thinking, plans and
// the rest stay out.
type turnTranscript struct {
	b        strings.Builder
	speaking bool // the agent's text is being written
}

func (t *turnTranscript) add(ev *Event) {
	switch ev.Kind {
	case KindTurnStart:
		text := ev.Text
		if i := strings.Index(text, transcriptEnd); strings.HasPrefix(text, transcriptStart) && i >= 0 {
			text = strings.TrimPrefix(text[i+len(transcriptEnd):], "\n") // the turns it repeats are here already
		}
		t.pause()
		t.b.WriteString("User: " + text + "\n")
	case KindText:
		if !t.speaking {
			t.b.WriteString("Assistant: ")
			t.speaking = true
		}
		t.b.WriteString(ev.Text)
	case KindToolEnd:
		if ev.Tool != nil {
			t.pause()
			fmt.Fprintf(&t.b, "(tool call %q: %s)\n", ev.Tool.Title, ev.Tool.Status)
		}
	}
}

// pause ends the agent's text, if it is being written, with a newline.
func (t *turnTranscript) pause() {
	if t.speaking && !strings.HasSuffix(t.b.String(), "\n") {
		t.b.WriteString("\n")
	}
	t.speaking = false
}

// String is the turn's transcript, ending with a newline.
func (t *turnTranscript) String() string {
	t.pause()
	return t.b.String()
}

// reseed gives a transcript fork opened again before its first turn its
// transcript back, from the journal.
func (r *sessionRecords) reseed(ctx context.Context) error {
	s := r.s
	o := s.fork // s is not shared yet
	if o == nil || !o.Transcript || s.turns.started != o.AfterTurn {
		return nil
	}
	seed, err := journalTranscript(ctx, s.b.host.journal, o.Parent, o.AfterTurn)
	if err != nil {
		return fmt.Errorf("bridge %s: transcript fork %s: %w", s.b.cfg.ID, s.key, err)
	}
	s.seed = seed
	return nil
}
