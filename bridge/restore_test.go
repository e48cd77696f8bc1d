package bridge

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

const (
	restoreModes   = `{"currentModeId":"default","availableModes":[{"id":"default","name":"Default"},{"id":"dontAsk","name":"Don't ask"}]}`
	restoreOptions = `[{"id":"verbosity","name":"Verbosity","type":"select","currentValue":"low","options":[{"value":"low","name":"Low"},{"value":"high","name":"High"}]}]`
	restoreModels  = `{"currentModelId":"m1","availableModels":[{"modelId":"m1","name":"M1"},{"modelId":"m2","name":"M2"}]}`
)

func restoreScript(known ...string) acptest.Script {
	return acptest.Script{
		NewSession:  acptest.NewSessionScript{Modes: raw(restoreModes), ConfigOptions: raw(restoreOptions), Models: raw(restoreModels)},
		LoadSession: acptest.LoadSessionScript{Sessions: known, Modes: raw(restoreModes), ConfigOptions: raw(restoreOptions), Models: raw(restoreModels)},
	}
}

// sentAfterLoad returns the methods and params the agent received after
// its last session/load or session/resume.
func sentAfterLoad(tr *acptest.Transport) []string {
	var out []string
	for _, a := range tr.Agents() {
		for _, m := range a.Received() {
			if m.Method == "session/load" || m.Method == "session/resume" {
				out = nil
			}
			if m.Method != "" {
				out = append(out, m.Method+" "+string(m.Params))
			}
		}
	}
	return out
}

// A resumed session comes back as the user left it: the agent mode,
// config option values, model and effort chosen before it was closed are
// set again after the load (the agent reopens it in its defaults).
func TestResumeRestoresModeModelAndOptions(t *testing.T) {
	tr := &acptest.Transport{Script: restoreScript()}
	h, _ := newHostAndRecorder(t, &HostOptions{Journal: newLifeJournal()})
	b, err := h.Start(ctxT(t), Config{ID: "rs", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Key: "k", Cwd: t.TempDir(), Policy: Policy{Mode: ModeFull}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAgentMode(ctxT(t), "dontAsk"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetConfigOption(ctxT(t), acpclient.SetConfigOptionRequest{ConfigID: "verbosity", Value: "high"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetModel(ctxT(t), "m2"); err != nil {
		t.Fatal(err)
	}
	native := s.ID()
	if err := s.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	tr.Script.LoadSession.Sessions = []string{native} // a new agent process knows it too

	s, err = b.OpenSession(ctxT(t), SessionConfig{Key: "k", Policy: Policy{Mode: ModeFull}})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Ready().Resumed {
		t.Fatalf("the session was not loaded: %+v", s.Ready())
	}
	if got := s.AgentMode(); got != "dontAsk" {
		t.Errorf("AgentMode after resume = %q, want the recorded dontAsk", got)
	}
	opts := s.ConfigOptions()
	if i := slices.IndexFunc(opts, func(o acpclient.ConfigOption) bool { return o.ID == "verbosity" }); i < 0 || opts[i].Value != "high" {
		t.Errorf("config options after resume %+v, want verbosity high", opts)
	}
	sent := strings.Join(sentAfterLoad(tr), "\n")
	for _, want := range []string{`session/set_mode {"sessionId":"` + native + `","modeId":"dontAsk"}`, `"modelId":"m2"`, `"configId":"verbosity","value":"high"`} {
		if !strings.Contains(sent, want) {
			t.Errorf("after the load the agent was not sent %s; it got:\n%s", want, sent)
		}
	}
}

// A recorded agent mode that the authority rules now refuse is not set
// silently, nor does it fail the open: the session opens in the agent's
// mode, an error event says what was not restored and why, and prompts
// work.
func TestResumeReportsARefusedRecordedMode(t *testing.T) {
	tr := &acptest.Transport{Script: restoreScript("sess_old")}
	tr.Script.Prompts = []acptest.Turn{{Steps: []acptest.Step{{Text: "ok"}}}}
	j := newLifeJournal()
	j.SaveSession(ctxT(t), "k", Record{Key: "k", NativeSessionID: "sess_old", Cwd: t.TempDir(), SessionMode: "dontAsk"})
	h, rec := newHostAndRecorder(t, &HostOptions{Journal: j})
	b, err := h.Start(ctxT(t), Config{ID: "rs", Transport: tr,
		AgentModes: &ModeTable{Asking: "default", Auto: []string{"dontAsk"}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Key: "k", Policy: Policy{Mode: ModeAsk}})
	if err != nil {
		t.Fatalf("OpenSession failed over a refused recorded mode: %v", err)
	}
	if got := s.AgentMode(); got != "default" {
		t.Errorf("AgentMode = %q, want default (dontAsk is refused in Ask)", got)
	}
	ev := rec.waitFor("an error event about the recorded mode", func(ev Event) bool {
		return ev.Kind == KindError && ev.Err != nil && strings.Contains(ev.Err.Error(), `recorded agent mode "dontAsk"`)
	})
	var ae *AuthorityError
	if !errors.As(ev.Err, &ae) {
		t.Errorf("the error %v does not carry the authority refusal", ev.Err)
	}
	if strings.Contains(strings.Join(sentAfterLoad(tr), "\n"), `"modeId":"dontAsk"`) {
		t.Error("the refused mode was sent to the agent")
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("go")); err != nil {
		t.Errorf("a prompt after the refused restore: %v", err)
	}
}
