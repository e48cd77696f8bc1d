package bridge

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// promptTexts returns the text blocks of each session/prompt the agent got
// for session id.
func promptTexts(t *testing.T, a *acptest.Agent, id string) [][]string {
	t.Helper()
	var out [][]string
	for _, m := range sentTo(a, "session/prompt") {
		var p acpclient.PromptRequest
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Fatal(err)
		}
		if p.SessionID != id {
			continue
		}
		var texts []string
		for _, b := range p.Prompt {
			texts = append(texts, b.Text)
		}
		out = append(out, texts)
	}
	return out
}

// A rewind the agent cannot make natively, made as a transcript fork by
// the app's explicit choice: a new native session, marked as a transcript
// fork, whose first prompt carries the transcript of the turns before the
// point (and none after it) ahead of the app's message; later prompts do
// not. The fork's history holds the parent's turns before the point only,
// then its own, the transcript shown in its first turn_start.
func TestTranscriptForkSeedsTheFirstPrompt(t *testing.T) {
	j := newLifeJournal()
	_, b, tr, rec := forkHost(t, j, forkScript(withFork, "edited", "next", "one", "two"))
	parent, err := b.OpenSession(ctxT(t), SessionConfig{Key: "p", Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, parent, "one")
	mustPrompt(t, parent, "two")
	child, err := parent.Fork(ctxT(t), ForkOptions{Key: "c", BeforeTurn: 2, Transcript: true})
	if err != nil {
		t.Fatal(err)
	}
	a := tr.Agents()[0]
	if n := len(sentTo(a, "session/fork")); n != 0 {
		t.Errorf("the agent got %d session/fork calls for a rewind it cannot make", n)
	}
	if n := len(sentTo(a, "session/new")); n != 2 {
		t.Errorf("the agent got %d session/new calls, want the parent's and the transcript fork's", n)
	}
	want := ForkOrigin{Parent: "p", ParentSession: parent.ID(), AfterTurn: 1, Transcript: true}
	if o := child.Ready().Fork; o == nil || *o != want {
		t.Errorf("origin %+v, want %+v", o, want)
	}
	if r, _ := j.record("c"); r.Fork == nil || *r.Fork != want {
		t.Errorf("record's origin %+v, want %+v", r.Fork, want)
	}
	mustPrompt(t, child, "edited")
	mustPrompt(t, child, "next")
	prompts := promptTexts(t, a, child.ID())
	if len(prompts) != 2 || len(prompts[0]) != 2 || prompts[0][1] != "edited" || len(prompts[1]) != 1 || prompts[1][0] != "next" {
		t.Fatalf("the fork's prompts %q, want the transcript and \"edited\", then \"next\" alone", prompts)
	}
	seed := prompts[0][0]
	for _, w := range []string{transcriptStart, "User: one\n", "Assistant: reply one\n", transcriptEnd} {
		if !strings.Contains(seed, w) {
			t.Errorf("the transcript lacks %q:\n%s", w, seed)
		}
	}
	if strings.Contains(seed, "two") {
		t.Errorf("the transcript holds turn 2, the one rewound:\n%s", seed)
	}
	rec.waitFor("the fork's second turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Key == "c" && ev.Turn == 3 })
	var texts []string
	var start string
	for ev, err := range History(ctxT(t), j, "c") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == KindText {
			texts = append(texts, ev.Text)
		}
		if ev.Kind == KindTurnStart && ev.Key == "c" && ev.Turn == 2 {
			start = ev.Text
		}
	}
	if got := strings.Join(texts, ","); got != "reply one,reply edited,reply next" {
		t.Errorf("the fork's history texts %q, want the parent's turn 1, then its own", got)
	}
	if !strings.HasPrefix(start, transcriptStart) || !strings.HasSuffix(start, transcriptEnd+"\nedited") {
		t.Errorf("the fork's first turn_start %q does not show the transcript ahead of the message", start)
	}
}

// The agent's own fork is used wherever it can make one, even when the app
// allows a transcript; an agent without session/fork gets a transcript of
// every turn for a fork at the end.
func TestTranscriptForkOnlyWhereTheAgentCannotFork(t *testing.T) {
	for _, c := range []struct {
		name       string
		caps       json.RawMessage
		transcript bool
	}{{"agent forks", withFork, false}, {"agent cannot fork", nil, true}} {
		t.Run(c.name, func(t *testing.T) {
			j := newLifeJournal()
			_, b, tr, _ := forkHost(t, j, forkScript(c.caps, "again", "one"))
			parent, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			mustPrompt(t, parent, "one")
			child, err := parent.Fork(ctxT(t), ForkOptions{Transcript: true})
			if err != nil {
				t.Fatal(err)
			}
			if o := child.Ready().Fork; o == nil || o.Transcript != c.transcript || o.AfterTurn != 1 {
				t.Errorf("origin %+v, want a transcript fork: %v, after turn 1", o, c.transcript)
			}
			mustPrompt(t, child, "again")
			first := promptTexts(t, tr.Agents()[0], child.ID())[0]
			if seeded := strings.HasPrefix(first[0], transcriptStart); seeded != c.transcript || c.transcript && !strings.Contains(first[0], "User: one") {
				t.Errorf("the fork's first prompt %q: seeded %v, want %v", first, seeded, c.transcript)
			}
		})
	}
}

// A transcript fork opened again before its first turn gets its
// transcript back from the journal.
func TestTranscriptForkReopenedKeepsItsSeed(t *testing.T) {
	j := newLifeJournal()
	_, b, tr, _ := forkHost(t, j, forkScript(nil, "edited", "one"))
	parent, err := b.OpenSession(ctxT(t), SessionConfig{Key: "p", Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, parent, "one")
	child, err := parent.Fork(ctxT(t), ForkOptions{Key: "c", Transcript: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	again, err := b.OpenSession(ctxT(t), SessionConfig{Key: "c"})
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, again, "edited")
	first := promptTexts(t, tr.Agents()[0], again.ID())[0]
	if len(first) != 2 || !strings.HasPrefix(first[0], transcriptStart) || !strings.Contains(first[0], "Assistant: reply one") {
		t.Errorf("the reopened fork's first prompt %q, want the transcript ahead of the message", first)
	}
}

// A transcript is read from the journal: without one the fork is refused
// and nothing is sent.
func TestTranscriptForkNeedsAJournal(t *testing.T) {
	_, b, tr, _ := forkHost(t, nil, forkScript(nil, "one"))
	parent, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, parent, "one")
	if _, err := parent.Fork(ctxT(t), ForkOptions{Transcript: true}); !errors.Is(err, errNoJournalForTranscript) {
		t.Errorf("transcript fork without a journal: %v", err)
	}
	if n := len(sentTo(tr.Agents()[0], "session/new")); n != 1 {
		t.Errorf("the agent got %d session/new calls, want the parent's", n)
	}
}
