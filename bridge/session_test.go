package bridge

import (
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/waitfor"
)

// noResume is an agent that can neither load nor resume sessions.
var noResume = raw(`{"loadSession":false,"sessionCapabilities":{}}`)

// agentSequence starts the agents of its transports in turn, one per
// Connect, so a restarted agent can differ from the first.
type agentSequence struct {
	mu     sync.Mutex
	agents []*acptest.Transport
	next   int
}

func (a *agentSequence) Connect(ctx context.Context) (io.ReadWriteCloser, error) {
	a.mu.Lock()
	t := a.agents[min(a.next, len(a.agents)-1)]
	a.next++
	a.mu.Unlock()
	return t.Connect(ctx)
}

// sentTo returns the messages of one method the agent received.
func sentTo(a *acptest.Agent, method string) []acptest.Message {
	var out []acptest.Message
	for _, m := range a.Received() {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// After a crash of an agent that cannot resume, the same Session keeps its
// key: later events carry it, the bridge finds the session by its old id
// and by its key, and the session-ready event, Ready, the native history
// and the journal's record say which native session was replaced and why.
func TestRestartedAgentThatCannotResumeKeepsTheKey(t *testing.T) {
	exit := 1
	script := func(id string) *acptest.Transport {
		return &acptest.Transport{Script: acptest.Script{
			Initialize: acptest.InitializeScript{AgentCapabilities: noResume},
			NewSession: acptest.NewSessionScript{SessionIDs: []string{id}},
			Prompts: []acptest.Turn{
				{Match: "crash", Steps: []acptest.Step{{Exit: &exit}}},
				{Steps: []acptest.Step{{Text: "fresh"}}},
			},
		}}
	}
	tr := &agentSequence{agents: []*acptest.Transport{script("sess_first"), script("sess_second")}}
	j := newLifeJournal()
	h, rec := newHostAndRecorder(t, &HostOptions{Journal: j})
	b, err := h.Start(ctxT(t), Config{ID: "k", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Key: "chat"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("crash")); err == nil {
		t.Fatal("the crashing turn succeeded")
	}
	rec.waitFor("exited", func(ev Event) bool { return ev.Kind == KindExited })
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("again")); err != nil {
		t.Fatal(err)
	}
	newID := s.ID()
	if newID != "sess_second" {
		t.Fatalf("native id after the restart %q, want sess_second", newID)
	}
	if s.Key() != "chat" {
		t.Errorf("key %q after the restart", s.Key())
	}
	fresh := rec.waitFor("fresh", func(ev Event) bool { return ev.Kind == KindText && ev.Text == "fresh" })
	if fresh.Key != "chat" || fresh.Session != newID {
		t.Errorf("event after the restart: key %q session %q", fresh.Key, fresh.Session)
	}
	for _, id := range []string{"sess_first", newID, "chat"} {
		if b.Session(id) != s {
			t.Errorf("Bridge.Session(%q) does not find the session", id)
		}
	}
	ready := rec.waitFor("replacing ready", func(ev Event) bool { return ev.Kind == KindSession && ev.Session == newID }).SessionReady
	if ready.Resumed || ready.Replaced != "sess_first" || ready.Reason != ReplacedAfterRestart || ready.ResumeError == "" {
		t.Errorf("ready %+v: want sess_first replaced after the restart", ready)
	}
	if got := s.Ready(); !reflect.DeepEqual(got, *ready) {
		t.Errorf("Ready() %+v, want the latest event's %+v", got, *ready)
	}
	hist := s.NativeHistory()
	if len(hist) != 2 || hist[0].ID != "sess_first" || hist[1].ID != newID || !strings.HasPrefix(hist[1].Reason, ReplacedAfterRestart+": ") {
		t.Errorf("native history %+v", hist)
	}
	r, ok := j.record("chat")
	if !ok || r.NativeSessionID != newID || !reflect.DeepEqual(r.NativeHistory, hist) {
		t.Errorf("journaled record %+v, want native %s and history %+v", r, newID, hist)
	}
}

// The record in the journal holds what resuming needs, and a turn's end
// updates its turn count, title and update time.
func TestRecordIsJournaled(t *testing.T) {
	tr := &acptest.Transport{Script: acptest.Script{
		NewSession: acptest.NewSessionScript{SessionIDs: []string{"sess_R"}},
		Prompts: []acptest.Turn{{Steps: []acptest.Step{
			update(`{"sessionUpdate":"session_info_update","title":"Fix the build"}`), {Text: "ok"}}}},
	}}
	j := newLifeJournal()
	h, _ := newHostAndRecorder(t, &HostOptions{Journal: j})
	b, err := h.Start(ctxT(t), Config{ID: "rj", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Key: "k1", ExternalDirectories: []string{"/x"},
		Policy: Policy{Mode: ModeAsk}, Model: "", Effort: ""})
	if err != nil {
		t.Fatal(err)
	}
	r, ok := j.record("k1")
	if !ok || r.Key != "k1" || r.Bridge != "rj" || r.NativeSessionID != "sess_R" || len(r.NativeHistory) != 1 ||
		r.Cwd != "/w" || !reflect.DeepEqual(r.ExternalDirectories, []string{"/x"}) || r.Mode != "ask" ||
		r.CreatedAt.Before(before.Add(-time.Second)) || r.UpdatedAt.IsZero() || r.Turns != 0 {
		t.Fatalf("record after open %+v %v", r, ok)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	r2, _ := j.record("k1")
	if r2.Turns != 1 || r2.Title != "Fix the build" || r2.UpdatedAt.Before(r.UpdatedAt) || !r2.CreatedAt.Equal(r.CreatedAt) {
		t.Errorf("record after a turn %+v", r2)
	}
}

// OpenSession with a key whose record is in the journal, and no ResumeID,
// loads the recorded native session, in the recorded directory.
func TestOpenByKeyResumesTheRecordedSession(t *testing.T) {
	tr := &acptest.Transport{Script: acptest.Script{LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_old"}}}}
	j := newLifeJournal()
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	j.SaveSession(ctxT(t), "k", Record{Key: "k", Bridge: "o", NativeSessionID: "sess_old", Cwd: "/proj", CreatedAt: created,
		NativeHistory: []NativeSession{{ID: "sess_old", Since: created}}, Turns: 3})
	h, rec := newHostAndRecorder(t, &HostOptions{Journal: j})
	b, err := h.Start(ctxT(t), Config{ID: "o", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() != "sess_old" || !s.Ready().Resumed {
		t.Fatalf("opened %q, ready %+v: want sess_old resumed", s.ID(), s.Ready())
	}
	loads := sentTo(tr.Agents()[0], "session/load")
	if len(loads) != 1 || !strings.Contains(string(loads[0].Params), `"cwd":"/proj"`) {
		t.Errorf("session/load sent %v, want the recorded cwd", loads)
	}
	if r, _ := j.record("k"); !r.CreatedAt.Equal(created) || len(r.NativeHistory) != 1 {
		t.Errorf("record after resume %+v: creation time and history kept", r)
	}
	// Turn numbers go on from the record's count.
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("go on")); err != nil {
		t.Fatal(err)
	}
	if ev := rec.waitFor("turn_start", func(ev Event) bool { return ev.Kind == KindTurnStart }); ev.Turn != 4 {
		t.Errorf("the resumed session's turn is numbered %d, want 4", ev.Turn)
	}
	rec.waitFor("turn_end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	if r, _ := j.record("k"); r.Turns != 4 {
		t.Errorf("the record counts %d turns, want 4", r.Turns)
	}
}

// Session.Ready tells how the session opened without waiting for the event.
func TestReadyTellsHowTheSessionOpened(t *testing.T) {
	tr := &acptest.Transport{Script: acptest.Script{NewSession: acptest.NewSessionScript{SessionIDs: []string{"sess_new"},
		Modes: raw(`{"currentModeId":"code","availableModes":[{"id":"code","name":"Code"}]}`)}}}
	h, _ := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), Config{ID: "rd", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", ResumeID: "sess_gone"})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Ready()
	if r.Resumed || r.ResumeError == "" || r.Replaced != "sess_gone" || r.Reason != ReplacedOnOpen ||
		r.AgentModes == nil || r.AgentModes.CurrentModeID != "code" {
		t.Errorf("Ready() %+v", r)
	}
}

// By default, with a journal that holds the key's history, the transcript
// a load replays is dropped and counted (an app showing the journal would
// show every turn twice); state still arrives. With KeepJournaledReplay it
// is delivered, marked Replay. (The agent here can only load: one that
// can resume is not asked for a replay at all, see
// TestJournaledSessionResumesWithoutReplay.)
func TestJournaledReplayIsSkippedByDefault(t *testing.T) {
	for _, skip := range []bool{true, false} {
		t.Run(map[bool]string{true: "skip", false: "deliver"}[skip], func(t *testing.T) {
			tr := &acptest.Transport{Script: acptest.Script{Initialize: acptest.InitializeScript{AgentCapabilities: loadOnly},
				LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_old"}, Replay: []acptest.Step{
					update(`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"question"}}`),
					{Text: "answer"},
					update(`{"sessionUpdate":"tool_call","toolCallId":"r1","title":"Read","status":"pending"}`),
					update(`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"init","description":"d"}]}`),
				}}, Prompts: []acptest.Turn{{StopReason: "cancelled"}}}}
			j := newLifeJournal()
			j.Append(ctxT(t), []Event{{Pos: 1, Key: "k", Seq: 1, Kind: KindText, Text: "answer"}})
			j.SaveSession(ctxT(t), "k", Record{Key: "k", NativeSessionID: "sess_old", Cwd: "/w"})
			h, rec := newHostAndRecorder(t, &HostOptions{Journal: j})
			b, err := h.Start(ctxT(t), Config{ID: "sk", Transport: tr})
			if err != nil {
				t.Fatal(err)
			}
			s, err := b.OpenSession(ctxT(t), SessionConfig{Key: "k", KeepJournaledReplay: !skip})
			if err != nil {
				t.Fatal(err)
			}
			rec.waitFor("authority", func(ev Event) bool { return ev.Kind == KindAuthority })
			got := kinds(rec.of("sk", s.ID()))
			want := []string{"user_text:question(replay)", "text:answer(replay)", "tool_start:r1:pending(replay)", "commands(replay)", "session", "authority"}
			ready := s.Ready()
			if skip {
				want = []string{"commands(replay)", "session", "authority"}
				if ready.ReplaySkipped != 3 {
					t.Errorf("ReplaySkipped %d, want 3", ready.ReplaySkipped)
				}
				// A row of the dropped replay is not closed by a turn: the
				// app never saw it.
				if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("go")); err != nil {
					t.Fatal(err)
				}
				rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
				for _, ev := range rec.of("sk", s.ID()) {
					if ev.Tool != nil {
						t.Errorf("tool event %s for a row of the dropped replay", describe(ev))
					}
				}
			} else if ready.ReplaySkipped != 0 {
				t.Errorf("ReplaySkipped %d without the option", ready.ReplaySkipped)
			}
			if !ready.HistoryJournaled || !ready.Resumed {
				t.Errorf("ready %+v: the journal holds the history", ready)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("events %q, want %q", got, want)
			}
		})
	}
}

// A key is open once per Host, until its session or bridge is closed.
func TestOpenSessionRefusesAnOpenKey(t *testing.T) {
	h, _ := newHostAndRecorder(t, nil)
	b1, err := h.Start(ctxT(t), Config{ID: "a", Transport: &acptest.Transport{}})
	if err != nil {
		t.Fatal(err)
	}
	b2, err := h.Start(ctxT(t), Config{ID: "b", Transport: &acptest.Transport{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b1.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Key: "same"}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []*Bridge{b1, b2} {
		if _, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Key: "same"}); !errors.Is(err, ErrSessionOpen) {
			t.Errorf("second open of the key on %s: %v, want ErrSessionOpen", b.ID(), err)
		}
	}
	// Closing a bridge closes its sessions, which frees their keys.
	b1.Close()
	if _, err := b2.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Key: "same"}); err != nil {
		t.Errorf("opening the key of a closed bridge's session: %v", err)
	}
}

// A turn is counted in the record when it starts: a host that dies in the
// middle of a turn leaves a record whose next turn gets a new number.
func TestRecordCountsATurnWhenItStarts(t *testing.T) {
	tr := &acptest.Transport{Script: acptest.Script{
		Prompts: []acptest.Turn{{Steps: []acptest.Step{{Text: "working"}, {WaitCancel: true}}}},
	}}
	j := newLifeJournal()
	h, rec := newHostAndRecorder(t, &HostOptions{Journal: j})
	b, err := h.Start(ctxT(t), Config{ID: "tc", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan struct{})
	go func() { defer close(done); s.Prompt(ctx, acpclient.TextBlock("go")) }()
	rec.waitFor("output", func(ev Event) bool { return ev.Text == "working" })
	if r, _ := j.record("k"); r.Turns != 1 {
		t.Errorf("the record counts %d turns while the first runs, want 1", r.Turns)
	}
	cancel()
	waitfor.Closed(t, done, "the call to return")
}
