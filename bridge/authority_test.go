package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/reaper"
	"github.com/acphost/acphost/internal/waitfor"
)

// claudeLikeModes are the session modes the fake agent offers in these
// tests, shaped like claude-agent-acp's.
const claudeLikeModes = `[{"id":"default","name":"Default"},{"id":"plan","name":"Plan"},{"id":"review","name":"Review"},{"id":"acceptEdits","name":"Accept edits"},{"id":"bypassPermissions","name":"Bypass"}]`

// modesIn is a session/new modes object with the agent in current.
func modesIn(current string) json.RawMessage {
	return raw(`{"currentModeId":"` + current + `","availableModes":` + claudeLikeModes + `}`)
}

// authoritySession opens a session under policy on an in-process fake
// agent with table, the agent starting in mode.
func authoritySession(t *testing.T, table *ModeTable, policy Policy, mode string, script acptest.Script) (*Session, *acptest.Transport, *recorder) {
	t.Helper()
	script.NewSession.Modes = modesIn(mode)
	tr := &acptest.Transport{Script: script}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), Config{ID: "auth", Transport: tr, AgentModes: table})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir(), Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	return s, tr, rec
}

// modesSent are the mode ids the agent was asked to switch to, in order.
func modesSent(a *acptest.Agent) []string {
	var out []string
	for _, m := range sentTo(a, "session/set_mode") {
		var p struct {
			ModeID string `json:"modeId"`
		}
		json.Unmarshal(m.Params, &p)
		out = append(out, p.ModeID)
	}
	return out
}

// waitSent waits until the agent has received a message of method whose
// params contain want.
func waitSent(t *testing.T, a *acptest.Agent, method, want string) {
	t.Helper()
	if _, err := a.WaitFor(ctxT(t), func(m acptest.Message) bool {
		return m.Method == method && strings.Contains(string(m.Params), want)
	}); err != nil {
		t.Fatalf("waiting for %s with %s: %v; received %v", method, want, err, a.Received())
	}
}

// waitAuthority polls the session's authority until ok holds (the worker
// that moves the agent runs on its own), within a deadline.
func waitAuthority(t *testing.T, s *Session, ok func(AuthorityState) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok(s.Authority()) {
		if time.Now().After(deadline) {
			t.Fatalf("authority stayed %+v", s.Authority())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestAuthorityAtOpen: when a session opens, an agent mode that acts
// unasked is moved before Ready is reported, to where the host mode wants
// it; Full moves nothing and reports the agent autonomous. The session
// event carries the mode moved to, and an authority event follows it.
func TestAuthorityAtOpen(t *testing.T) {
	cases := []struct {
		name   string
		table  *ModeTable
		policy Policy
		start  string
		sent   []string
		mode   string
		state  Authority
	}{
		{"ask to plan", fullTable, policyOf(ModeAsk), "acceptEdits", []string{"plan"}, "plan", AuthorityProtected},
		{"ask without plan", noPlanTable, policyOf(ModeAsk), "auto", []string{"default"}, "default", AuthorityProtected},
		{"plan from asking", fullTable, policyOf(ModePlan), "default", []string{"plan"}, "plan", AuthorityProtected},
		{"plan without plan mode", noPlanTable, policyOf(ModePlan), "default", nil, "default", AuthorityProtected},
		{"build to asking", fullTable, policyOf(ModeBuild), "bypassPermissions", []string{"default"}, "default", AuthorityProtected},
		{"build keeps a safe mode", fullTable, policyOf(ModeBuild), "review", nil, "review", AuthorityProtected},
		{"build moves an unknown mode", fullTable, policyOf(ModeBuild), "turbo", []string{"default"}, "default", AuthorityProtected},
		{"read-only", fullTable, Policy{Mode: ModeFull, ReadOnly: true}, "acceptEdits", []string{"plan"}, "plan", AuthorityProtected},
		{"full keeps auto", fullTable, policyOf(ModeFull), "bypassPermissions", nil, "bypassPermissions", AuthorityAgentAutonomous},
		{"full, asking", fullTable, policyOf(ModeFull), "default", nil, "default", AuthorityProtected},
		{"no table", nil, policyOf(ModeAsk), "acceptEdits", nil, "acceptEdits", AuthorityUnknown},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, tr, rec := authoritySession(t, c.table, c.policy, c.start, acptest.Script{})
			if got := modesSent(tr.Agents()[0]); !slices.Equal(got, c.sent) {
				t.Errorf("set_mode sent %q, want %q", got, c.sent)
			}
			if s.AgentMode() != c.mode || s.Ready().AgentModes.CurrentModeID != c.mode {
				t.Errorf("AgentMode %q, Ready's %q; want %q", s.AgentMode(), s.Ready().AgentModes.CurrentModeID, c.mode)
			}
			st := s.Authority()
			if st.State != c.state || st.Blocked || st.AgentMode != c.mode {
				t.Errorf("Authority %+v, want %s in %q", st, c.state, c.mode)
			}
			ev := rec.waitFor("authority", func(ev Event) bool { return ev.Kind == KindAuthority })
			if ev.Authority == nil || *ev.Authority != st {
				t.Errorf("authority event %+v, want %+v", ev.Authority, st)
			}
			if got := kinds(rec.of("auth", s.ID()), KindCommands); !slices.Equal(got, []string{"session", "authority"}) {
				t.Errorf("events %q: the session event, then the authority one", got)
			}
			if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("hi")); err != nil {
				t.Errorf("Prompt: %v", err)
			}
		})
	}
}

// TestNoTableIsUnknownNeverProtected: an agent without a table is reported
// unknown, saying why, in every host mode, and is not refused.
func TestNoTableIsUnknownNeverProtected(t *testing.T) {
	s, tr, _ := authoritySession(t, nil, policyOf(ModeAsk), "default", acptest.Script{})
	st := s.Authority()
	if st.State != AuthorityUnknown || st.Reason != "no mode table for this agent" || st.Blocked {
		t.Errorf("Authority %+v", st)
	}
	if err := s.SetAgentMode(ctxT(t), "bypassPermissions"); err != nil {
		t.Errorf("SetAgentMode without a table: %v", err)
	}
	if got := modesSent(tr.Agents()[0]); !slices.Equal(got, []string{"bypassPermissions"}) {
		t.Errorf("set_mode sent %q", got)
	}
	if st := s.Authority(); st.State != AuthorityUnknown {
		t.Errorf("after SetAgentMode: %+v", st)
	}
}

// TestAuthorityFailsClosed: an agent that cannot be moved out of an
// auto-approving mode makes Prompt fail with an *AuthorityError naming
// both modes, and nothing is prompted; a later change that makes it safe
// (the app choosing Full, or a mode that asks) lifts it.
func TestAuthorityFailsClosed(t *testing.T) {
	cases := []struct {
		name    string
		table   *ModeTable
		refuse  []string
		start   string
		sent    []string
		recover func(*Session) error
	}{
		{"agent refuses", fullTable, []string{"default"}, "acceptEdits", []string{"default"},
			func(s *Session) error { s.SetPolicy(policyOf(ModeFull)); return nil }},
		{"no asking mode", noAskingTable, nil, "yolo", nil,
			func(s *Session) error { return s.SetAgentMode(ctxT(t), "normal") }},
		{"refuses, then a safe mode", fullTable, []string{"default"}, "bypassPermissions", []string{"default"},
			func(s *Session) error { return s.SetAgentMode(ctxT(t), "review") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, tr, rec := authoritySession(t, c.table, policyOf(ModeBuild), c.start, acptest.Script{SetMode: acptest.SetModeScript{Refuse: c.refuse}})
			a := tr.Agents()[0]
			if got := modesSent(a); !slices.Equal(got, c.sent) {
				t.Errorf("set_mode sent %q, want %q", got, c.sent)
			}
			st := s.Authority()
			if st.State != AuthorityAgentAutonomous || !st.Blocked || !strings.Contains(st.Reason, "could not be moved") {
				t.Errorf("Authority %+v: autonomous and blocked", st)
			}
			_, err := s.Prompt(ctxT(t), acpclient.TextBlock("write it"))
			var ae *AuthorityError
			if !errors.As(err, &ae) || !errors.Is(err, ErrAgentAutonomous) || ae.AgentMode != c.start || ae.HostMode != ModeBuild {
				t.Fatalf("Prompt error %v: want an *AuthorityError for %s under build", err, c.start)
			}
			if !strings.Contains(err.Error(), "host mode build") || !strings.Contains(err.Error(), `"`+c.start+`"`) {
				t.Errorf("error %q names neither mode", err)
			}
			if n := len(sentTo(a, "session/prompt")); n != 0 {
				t.Errorf("%d prompts reached the agent", n)
			}
			if err := c.recover(s); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("now")); err != nil {
				t.Fatalf("Prompt after recovery: %v", err)
			}
			if st := s.Authority(); st.Blocked {
				t.Errorf("Authority after recovery %+v", st)
			}
			rec.waitFor("unblocked authority", func(ev Event) bool { return ev.Kind == KindAuthority && !ev.Authority.Blocked })
		})
	}
}

// TestAppChoiceOfAnAutoModeIsRefusedBeforeTheWire: outside Full,
// SetAgentMode and SetConfigOption to a value that acts unasked (or, under
// a Strict policy, that the table does not list) fail with an
// *AuthorityError and send nothing;
// in Full they go through and the session reports the agent autonomous.
func TestAppChoiceOfAnAutoModeIsRefusedBeforeTheWire(t *testing.T) {
	opts := raw(`[{"id":"allow_all","name":"Allow all","type":"boolean","currentValue":false},{"id":"approval","name":"Approval","type":"select","currentValue":"ask","options":[{"value":"ask","name":"Ask"},{"value":"never","name":"Never"}]}]`)
	s, tr, _ := authoritySession(t, fullTable, policyOf(ModeBuild), "default",
		acptest.Script{NewSession: acptest.NewSessionScript{ConfigOptions: opts}})
	a := tr.Agents()[0]
	yes := true
	refused := []struct {
		name string
		call func() error
		is   error
	}{
		{"auto mode", func() error { return s.SetAgentMode(ctxT(t), "acceptEdits") }, ErrAgentAutonomous},
		{"unknown mode, strict", func() error {
			s.SetPolicy(Policy{Mode: ModeBuild, Strict: true})
			defer s.SetPolicy(policyOf(ModeBuild))
			return s.SetAgentMode(ctxT(t), "turbo")
		}, ErrAgentModeUnknown},
		{"bool option", func() error {
			_, err := s.SetConfigOption(ctxT(t), acpclient.SetConfigOptionRequest{ConfigID: "allow_all", Bool: &yes})
			return err
		}, ErrAgentAutonomous},
		{"select option", func() error {
			_, err := s.SetConfigOption(ctxT(t), acpclient.SetConfigOptionRequest{ConfigID: "approval", Value: "never"})
			return err
		}, ErrAgentAutonomous},
	}
	for _, r := range refused {
		err := r.call()
		var ae *AuthorityError
		if !errors.As(err, &ae) || !errors.Is(err, r.is) || !strings.Contains(err.Error(), "host mode build") {
			t.Errorf("%s: %v, want an *AuthorityError wrapping %v", r.name, err, r.is)
		}
	}
	if got := len(sentTo(a, "session/set_mode")) + len(sentTo(a, "session/set_config_option")); got != 0 {
		t.Fatalf("%d refused changes reached the agent: %v", got, a.Received())
	}
	if err := s.SetAgentMode(ctxT(t), "review"); err != nil {
		t.Errorf("a safe mode refused: %v", err)
	}
	if err := s.SetAgentMode(ctxT(t), "turbo"); err != nil {
		t.Errorf("an unknown mode without Strict: %v", err)
	}
	s.SetPolicy(policyOf(ModeFull))
	if err := s.SetAgentMode(ctxT(t), "bypassPermissions"); err != nil {
		t.Fatalf("an auto mode in Full: %v", err)
	}
	if _, err := s.SetConfigOption(ctxT(t), acpclient.SetConfigOptionRequest{ConfigID: "allow_all", Bool: &yes}); err != nil {
		t.Fatalf("an auto option in Full: %v", err)
	}
	if st := s.Authority(); st.State != AuthorityAgentAutonomous || st.Blocked || st.AgentMode != "bypassPermissions" {
		t.Errorf("Authority in Full %+v", st)
	}
}

// TestAgentReportedChangeIsMovedBack: a mode or option the agent switches
// to on its own in the middle of a turn is moved back at once.
func TestAgentReportedChangeIsMovedBack(t *testing.T) {
	opts := raw(`[{"id":"allow_all","name":"Allow all","type":"boolean","currentValue":false}]`)
	s, tr, _ := authoritySession(t, fullTable, policyOf(ModeBuild), "default", acptest.Script{
		NewSession: acptest.NewSessionScript{ConfigOptions: opts},
		SetMode:    acptest.SetModeScript{Report: true},
		Prompts: []acptest.Turn{{Match: "mode", Steps: []acptest.Step{
			update(`{"sessionUpdate":"current_mode_update","currentModeId":"acceptEdits"}`),
			{WaitCancel: true}, // the turn lasts until the test has seen the move
		}}, {Match: "option", Steps: []acptest.Step{
			update(`{"sessionUpdate":"config_option_update","configOptions":[{"id":"allow_all","name":"Allow all","type":"boolean","currentValue":true}]}`),
			{WaitCancel: true},
		}}},
	})
	a := tr.Agents()[0]
	for _, c := range []struct{ prompt, method, want string }{
		{"mode", "session/set_mode", `"modeId":"default"`},
		{"option", "session/set_config_option", `"value":false`},
	} {
		done := make(chan error, 1)
		go func() { _, err := s.Prompt(ctxT(t), acpclient.TextBlock(c.prompt)); done <- err }()
		waitSent(t, a, c.method, c.want)
		waitAuthority(t, s, func(st AuthorityState) bool { return st.State == AuthorityProtected && st.AgentMode == "default" })
		s.Cancel()
		if err := waitfor.Recv(t, done, "the call to return"); err != nil {
			t.Fatalf("%s turn: %v", c.prompt, err)
		}
		if st := s.Authority(); st.State != AuthorityProtected || st.AgentMode != "default" {
			t.Errorf("after the %s change: %+v", c.prompt, st)
		}
	}
	if !strings.Contains(string(sentTo(a, "session/set_config_option")[0].Params), `"configId":"allow_all"`) {
		t.Errorf("set_config_option %s", sentTo(a, "session/set_config_option")[0].Params)
	}
}

// TestAgentReportedChangeThatCannotBeUndoneEndsTheTurn: when the agent
// switches itself to an auto mode mid-turn and refuses to go back, the
// turn is cancelled and the session refuses prompts.
func TestAgentReportedChangeThatCannotBeUndoneEndsTheTurn(t *testing.T) {
	s, tr, rec := authoritySession(t, fullTable, policyOf(ModeAsk), "default", acptest.Script{
		SetMode: acptest.SetModeScript{Refuse: []string{"plan", "default"}},
		Prompts: []acptest.Turn{{Steps: []acptest.Step{
			update(`{"sessionUpdate":"current_mode_update","currentModeId":"bypassPermissions"}`),
			{WaitCancel: true},
		}}},
	})
	stop, err := s.Prompt(ctxT(t), acpclient.TextBlock("go"))
	if err != nil || stop != acpclient.StopCancelled {
		t.Fatalf("turn ended %q, %v; want cancelled by the host", stop, err)
	}
	if got := modesSent(tr.Agents()[0]); !slices.Equal(got, []string{"plan"}) {
		t.Errorf("set_mode sent %q, want plan", got)
	}
	rec.waitFor("blocked", func(ev Event) bool { return ev.Kind == KindAuthority && ev.Authority.Blocked })
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("again")); !errors.Is(err, ErrAgentAutonomous) {
		t.Fatalf("Prompt after the escalation: %v", err)
	}
}

// TestSetPolicyMovesTheAgent: leaving Full moves an autonomous agent to a
// mode that asks (Plan to its plan mode) before the next prompt, and the
// session reports it protected.
func TestSetPolicyMovesTheAgent(t *testing.T) {
	s, tr, rec := authoritySession(t, fullTable, policyOf(ModeFull), "bypassPermissions", acptest.Script{SetMode: acptest.SetModeScript{Report: true}})
	a := tr.Agents()[0]
	if st := s.Authority(); st.State != AuthorityAgentAutonomous || st.Blocked {
		t.Fatalf("Authority in Full %+v", st)
	}
	s.SetPolicy(policyOf(ModeBuild))
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("hi")); err != nil {
		t.Fatalf("Prompt after SetPolicy(Build): %v", err)
	}
	if got := modesSent(a); !slices.Equal(got, []string{"default"}) {
		t.Errorf("set_mode sent %q, want default before the prompt", got)
	}
	if i, j := slices.IndexFunc(a.Received(), func(m acptest.Message) bool { return m.Method == "session/set_mode" }),
		slices.IndexFunc(a.Received(), func(m acptest.Message) bool { return m.Method == "session/prompt" }); i < 0 || i > j {
		t.Errorf("set_mode at %d, prompt at %d: the move comes first", i, j)
	}
	if st := s.Authority(); st.State != AuthorityProtected || st.HostMode != ModeBuild {
		t.Errorf("Authority after SetPolicy(Build) %+v", st)
	}
	s.SetPolicy(policyOf(ModePlan))
	waitSent(t, a, "session/set_mode", `"modeId":"plan"`)
	rec.waitFor("plan", func(ev Event) bool {
		return ev.Kind == KindAuthority && ev.Authority.HostMode == ModePlan && ev.Authority.AgentMode == "plan"
	})
}

// TestAuthorityInTheView: the Host's snapshot keeps the session's current
// authority, and a view rebuilt from the events' JSON has it too.
func TestAuthorityInTheView(t *testing.T) {
	s, _, rec := authoritySession(t, fullTable, policyOf(ModeAsk), "acceptEdits", acptest.Script{})
	rec.waitFor("authority", func(ev Event) bool { return ev.Kind == KindAuthority })
	var view SessionView
	for _, ev := range rec.of("auth", s.ID()) {
		data, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var back Event
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		view.Apply(back)
	}
	if view.Authority == nil || *view.Authority != s.Authority() || view.AgentMode != "plan" {
		t.Errorf("rebuilt view: authority %+v, agent mode %q; want %+v in plan", view.Authority, view.AgentMode, s.Authority())
	}
	h := s.Bridge().host
	for _, v := range h.Snapshot().Sessions {
		if v.Key == s.Key() && (v.Authority == nil || v.Authority.State != AuthorityProtected) {
			t.Errorf("snapshot authority %+v", v.Authority)
		}
	}
}

// escalatingProfile runs the fake agent binary; the launch option
// AgentMode "yolo" stands for a flag that makes it act without asking.
func escalatingProfile(t *testing.T, script acptest.Script) (*Profile, LaunchOptions) {
	t.Helper()
	script.NewSession.Modes = modesIn("default")
	table := *fullTable
	table.LaunchEscalation = func(o LaunchOptions) string {
		if o.AgentMode == "yolo" {
			return "--yolo"
		}
		return ""
	}
	p := &Profile{Name: "escalating", Binaries: []string{"fakeagent"}, Modes: &table}
	return p, LaunchOptions{Binary: acptest.BuildBinary(t), ExtraArgs: []string{"-script", acptest.WriteScript(t, script)}}
}

// TestLaunchEscalationNeedsFull: a launch whose flag makes the agent act
// unasked opens sessions only under host Full or Build, reports them
// autonomous with the flag named, and blocks one whose policy leaves Full
// until the app consents; a relaunch that would add the flag under a
// session in Ask is refused before the process is touched, and one that
// drops it unblocks.
func TestLaunchEscalationNeedsFull(t *testing.T) {
	p, o := escalatingProfile(t, acptest.Script{})
	o.AgentMode = "yolo"
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.StartProfile(ctxT(t), p, o, Config{ID: "esc"})
	if err != nil {
		t.Fatal(err)
	}
	for _, pol := range []Policy{policyOf(ModeAsk), policyOf(ModePlan), {Mode: ModeBuild, ReadOnly: true}, {Mode: ModeFull, ReadOnly: true}} {
		_, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir(), Policy: pol})
		var ae *AuthorityError
		if !errors.As(err, &ae) || ae.Flag != "--yolo" || !errors.Is(err, ErrAgentAutonomous) {
			t.Errorf("OpenSession under %+v: %v, want an *AuthorityError naming --yolo", pol, err)
		}
	}
	if n := countKind(rec.snapshot(), KindSession); n != 0 {
		t.Errorf("%d sessions opened by refused calls", n)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir(), Policy: policyOf(ModeFull)})
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Authority(); st.State != AuthorityAgentAutonomous || st.Flag != "--yolo" || st.Blocked {
		t.Errorf("Authority under Full %+v", st)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("hi")); err != nil {
		t.Fatal(err)
	}
	s.SetPolicy(policyOf(ModeBuild))
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("hi")); !errors.Is(err, ErrAgentAutonomous) || !strings.Contains(err.Error(), `"--yolo"`) {
		t.Fatalf("Prompt after leaving Full: %v", err)
	}
	if st := s.Authority(); !st.ConsentNeeded {
		t.Errorf("Authority in Build without consent %+v: want ConsentNeeded", st)
	}
	s.SetPolicy(policyOf(ModeAsk))
	script := o.ExtraArgs[1]
	escalated := agentPids(t, script)
	if err := b.Relaunch(ctxT(t), func(o *LaunchOptions) { o.AgentMode = "" }); err != nil {
		t.Fatal(err)
	}
	if st := s.Authority(); st.State != AuthorityProtected || st.Flag != "" {
		t.Errorf("Authority after dropping the flag %+v", st)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("hi")); err != nil {
		t.Fatalf("Prompt after dropping the flag: %v", err)
	}
	exits := countKind(rec.snapshot(), KindExited)
	plain := agentPids(t, script)
	if len(escalated) != 1 || len(plain) != 1 || plain[0] == escalated[0] {
		t.Fatalf("agent processes %v with the flag, %v after dropping it: want one each, a new one", escalated, plain)
	}
	err = b.Relaunch(ctxT(t), func(o *LaunchOptions) { o.AgentMode = "yolo" })
	if !errors.Is(err, ErrAgentAutonomous) || !strings.Contains(err.Error(), "relaunch") {
		t.Fatalf("Relaunch adding the flag under Ask: %v", err)
	}
	if b.Launch().Options().AgentMode != "" || !b.Running() {
		t.Errorf("a refused relaunch changed the launch (%+v) or stopped the agent", b.Launch().Options())
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("hi")); err != nil {
		t.Fatalf("Prompt after the refused relaunch: %v", err)
	}
	if n := countKind(rec.snapshot(), KindExited); n != exits || !slices.Equal(agentPids(t, script), plain) {
		t.Errorf("the refused relaunch touched the agent: processes %v, were %v", agentPids(t, script), plain)
	}
}

// agentPids lists the processes whose command line holds arg, from /proc.
func agentPids(t *testing.T, arg string) []string {
	t.Helper()
	paths, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, p := range paths {
		// An agent's reaper (Linux) carries its command line too; it is not the agent.
		if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, []byte(arg)) && !bytes.HasPrefix(data, []byte(reaper.Arg0+"\x00")) {
			pids = append(pids, filepath.Base(filepath.Dir(p)))
		}
	}
	return pids
}

// countKind counts the events of kind k.
func countKind(events []Event, k Kind) int {
	n := 0
	for _, ev := range events {
		if ev.Kind == k {
			n++
		}
	}
	return n
}

// TestAgentThatKeepsSwitchingBackIsNotChased: an agent that answers every
// set_mode by reporting its auto mode again keeps its word (the session
// does not pretend it moved), is moved back at most maxAgentReverts times,
// and then the session is blocked: the turn is cancelled and the next
// prompt refused.
func TestAgentThatKeepsSwitchingBackIsNotChased(t *testing.T) {
	backToAuto := update(`{"sessionUpdate":"current_mode_update","currentModeId":"acceptEdits"}`)
	s, tr, rec := authoritySession(t, fullTable, policyOf(ModeBuild), "default", acptest.Script{
		Methods: map[string]acptest.Reply{"session/set_mode": {Steps: []acptest.Step{backToAuto}}},
		Prompts: []acptest.Turn{{Steps: []acptest.Step{backToAuto, {WaitCancel: true}}}},
	})
	stop, err := s.Prompt(ctxT(t), acpclient.TextBlock("go"))
	if err != nil || stop != acpclient.StopCancelled {
		t.Fatalf("turn ended %q, %v; want cancelled by the host", stop, err)
	}
	rec.waitFor("given up", func(ev Event) bool {
		return ev.Kind == KindAuthority && strings.Contains(ev.Authority.Reason, "switched itself back")
	})
	if got := modesSent(tr.Agents()[0]); len(got) != maxAgentReverts {
		t.Errorf("set_mode sent %d times, want %d", len(got), maxAgentReverts)
	}
	if st := s.Authority(); st.AgentMode != "acceptEdits" || !st.Blocked || s.AgentMode() != "acceptEdits" {
		t.Errorf("Authority %+v, AgentMode %q: the agent's own word stands", st, s.AgentMode())
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("again")); !errors.Is(err, ErrAgentAutonomous) {
		t.Fatalf("Prompt after giving up: %v", err)
	}
}

// TestAppTableOverridesTheProfiles: Config.AgentModes wins over the
// profile's Modes; without it the profile's table decides.
func TestAppTableOverridesTheProfiles(t *testing.T) {
	p, o := escalatingProfile(t, acptest.Script{})
	o.AgentMode = "yolo"
	h, _ := newHostAndRecorder(t, nil)
	b, err := h.StartProfile(ctxT(t), p, o, Config{ID: "own", AgentModes: noPlanTable})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir(), Policy: policyOf(ModeAsk)})
	if err != nil {
		t.Fatalf("OpenSession with the app's table (no launch flag in it): %v", err)
	}
	if st := s.Authority(); st.State != AuthorityProtected || st.Flag != "" {
		t.Errorf("Authority with the app's table %+v", st)
	}
}
