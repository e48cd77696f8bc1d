package bridge

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/acphost/acphost/acptest"
)

// loadOnly is the fake agent's default capabilities without
// session/resume: an agent that can only load, so it always replays.
var loadOnly = raw(`{"loadSession":true,"sessionCapabilities":{"list":{},"close":{}}}`)

// A session whose history the journal holds is reopened with
// session/resume where the agent offers it: the agent replays nothing
// and no replayed event reaches the app. KeepJournaledReplay asks for the
// agent's own replay (session/load), delivered marked Replay; a session
// the journal knows nothing of is loaded, replay and all, as before; and
// a resume the agent refuses falls back to a load, its replay dropped.
func TestJournaledSessionResumesWithoutReplay(t *testing.T) {
	tests := []struct {
		name        string
		journaled   bool
		keepReplay  bool
		resumeFails bool
		wantSent    map[string]int
		wantReplay  int // replayed events the app gets
		wantSkipped int // replayed events dropped as history
	}{
		{"journaled", true, false, false, map[string]int{"session/resume": 1}, 0, 0},
		{"journaled, agent's replay asked for", true, true, false, map[string]int{"session/load": 1}, 2, 0},
		{"nothing journaled", false, false, false, map[string]int{"session/load": 1}, 2, 0},
		{"journaled, resume refused", true, false, true, map[string]int{"session/resume": 1, "session/load": 1}, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &acptest.Transport{Script: acptest.Script{LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_old"}, Replay: []acptest.Step{
				update(`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"question"}}`),
				{Text: "answer"},
			}}}}
			if tt.resumeFails {
				tr.Script.Methods = map[string]acptest.Reply{"session/resume": {Error: &acptest.Error{Code: -32002, Message: "Resource not found"}}}
			}
			j := newLifeJournal()
			if tt.journaled {
				j.Append(ctxT(t), []Event{{Pos: 1, Key: "k", Seq: 1, Kind: KindText, Text: "answer"}})
			}
			j.SaveSession(ctxT(t), "k", Record{Key: "k", NativeSessionID: "sess_old", Cwd: "/w"})
			h, rec := newHostAndRecorder(t, &HostOptions{Journal: j})
			b, err := h.Start(ctxT(t), Config{ID: "rs", Transport: tr})
			if err != nil {
				t.Fatal(err)
			}
			s, err := b.OpenSession(ctxT(t), SessionConfig{Key: "k", KeepJournaledReplay: tt.keepReplay})
			if err != nil {
				t.Fatal(err)
			}
			rec.waitFor("authority", func(ev Event) bool { return ev.Kind == KindAuthority })
			sent := map[string]int{}
			for _, m := range []string{"session/load", "session/resume", "session/new"} {
				if n := len(sentChecked(t, tr, m)); n > 0 {
					sent[m] = n
				}
			}
			if !reflect.DeepEqual(sent, tt.wantSent) {
				t.Errorf("the agent got %v, want %v", sent, tt.wantSent)
			}
			replayed := 0
			for _, ev := range rec.of("rs", s.ID()) {
				if ev.Replay {
					replayed++
				}
			}
			ready := s.Ready()
			if replayed != tt.wantReplay || ready.ReplaySkipped != tt.wantSkipped || !ready.Resumed || ready.HistoryJournaled != tt.journaled || s.ID() != "sess_old" {
				t.Errorf("%d replayed events, ready %+v, id %s; want %d replayed, %d skipped, resumed sess_old", replayed, ready, s.ID(), tt.wantReplay, tt.wantSkipped)
			}
		})
	}
}

// BenchmarkReopenJournaledSession reopens a session whose journal holds
// its history, from an agent that would replay 10,000 updates on
// session/load: "resume" is the agent that offers session/resume (no
// replay), "load" one that can only load (the replay crosses the wire,
// and the bridge drops it as history).
func BenchmarkReopenJournaledSession(b *testing.B) {
	const updates = 10_000
	replay := make([]acptest.Step, updates)
	for i := range replay {
		replay[i] = acptest.Step{Text: fmt.Sprintf("line %d of an old answer\n", i)}
	}
	for _, tc := range []struct {
		name string
		caps []byte
	}{{"resume", nil}, {"load", loadOnly}} {
		b.Run(tc.name, func(b *testing.B) {
			tr := &acptest.Transport{Script: acptest.Script{Initialize: acptest.InitializeScript{AgentCapabilities: tc.caps},
				LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_old"}, Replay: replay}}}
			j := newLifeJournal()
			events := make([]Event, updates)
			for i := range events {
				events[i] = Event{Pos: uint64(i + 1), Key: "k", Seq: uint64(i + 1), Kind: KindText, Text: "old"}
			}
			j.Append(b.Context(), events)
			j.SaveSession(b.Context(), "k", Record{Key: "k", NativeSessionID: "sess_old", Cwd: "/w"})
			h := NewHost(&HostOptions{Journal: j})
			drained := make(chan struct{})
			go func() {
				defer close(drained)
				for range h.Events() {
				}
			}()
			defer func() { h.Shutdown(b.Context()); <-drained }()
			br, err := h.Start(b.Context(), Config{ID: "bench", Transport: tr})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				s, err := br.OpenSession(b.Context(), SessionConfig{Key: "k"})
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Close(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
