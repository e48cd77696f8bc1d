package bridge

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// TestUnknownIsReportedNotRefused: an agent in a mode its table does not
// list, which cannot be moved, is reported unknown and still prompted, in
// every host mode; a Strict policy keeps refusing it.
func TestUnknownIsReportedNotRefused(t *testing.T) {
	for _, m := range []Mode{ModeAsk, ModePlan, ModeBuild} {
		s, tr, rec := authoritySession(t, noAskingTable, policyOf(m), "turbo", acptest.Script{})
		rec.waitFor("an unknown authority event", func(ev Event) bool {
			return ev.Kind == KindAuthority && ev.Authority.State == AuthorityUnknown && !ev.Authority.Blocked
		})
		if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("hi")); err != nil {
			t.Fatalf("host mode %s: Prompt with unknown authority: %v", m, err)
		}
		if n := len(sentTo(tr.Agents()[0], "session/prompt")); n != 1 {
			t.Errorf("host mode %s: %d prompts reached the agent, want 1", m, n)
		}
		s.SetPolicy(Policy{Mode: m, Strict: true})
		if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("again")); !errors.Is(err, ErrAgentModeUnknown) {
			t.Fatalf("host mode %s, strict: Prompt %v, want ErrAgentModeUnknown", m, err)
		}
		if st := s.Authority(); st.State != AuthorityUnknown || !st.Blocked || st.ConsentNeeded {
			t.Errorf("host mode %s, strict: Authority %+v", m, st)
		}
	}
}

// TestConsentOncePerSession: an agent that acts unasked and cannot be
// moved asks the app for consent in host Build (an authority event with
// ConsentNeeded, prompts refused naming GrantAutonomy); GrantAutonomy
// opens the session, which reports agent-autonomous naming the mode, and
// is asked once: leaving Build refuses again, coming back does not ask. A
// second session asks anew.
func TestConsentOncePerSession(t *testing.T) {
	s, tr, rec := authoritySession(t, noAskingTable, policyOf(ModeBuild), "yolo", acptest.Script{})
	rec.waitFor("an authority event asking consent", func(ev Event) bool { return ev.Kind == KindAuthority && ev.Authority.ConsentNeeded })
	st := s.Authority()
	if st.State != AuthorityAgentAutonomous || !st.Blocked || !st.ConsentNeeded || st.AgentMode != "yolo" {
		t.Fatalf("Authority before consent %+v: want autonomous, blocked, consent needed", st)
	}
	_, err := s.Prompt(ctxT(t), acpclient.TextBlock("hi"))
	if !errors.Is(err, ErrAgentAutonomous) || !strings.Contains(err.Error(), "GrantAutonomy") {
		t.Fatalf("Prompt before consent: %v, want ErrAgentAutonomous naming GrantAutonomy", err)
	}
	s.GrantAutonomy()
	if st := s.Authority(); st.State != AuthorityAgentAutonomous || st.Blocked || st.ConsentNeeded || st.AgentMode != "yolo" {
		t.Fatalf("Authority after consent %+v", st)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("hi")); err != nil {
		t.Fatalf("Prompt after consent: %v", err)
	}
	s.SetPolicy(policyOf(ModeAsk))
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("hi")); !errors.Is(err, ErrAgentAutonomous) {
		t.Fatalf("Prompt in Ask after consent: %v, want refused", err)
	}
	if st := s.Authority(); st.ConsentNeeded {
		t.Errorf("Ask asks for consent: %+v", st)
	}
	s.SetPolicy(policyOf(ModeBuild))
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("hi")); err != nil {
		t.Fatalf("Prompt back in Build: %v", err)
	}
	asked := 0
	for _, ev := range rec.snapshot() {
		if ev.Kind == KindAuthority && ev.Authority.ConsentNeeded {
			asked++
		}
	}
	if asked != 1 {
		t.Errorf("consent asked %d times in one session, want once", asked)
	}
	if n := len(sentTo(tr.Agents()[0], "session/prompt")); n != 2 {
		t.Errorf("%d prompts reached the agent, want 2", n)
	}
	other, err := s.Bridge().OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir(), Policy: policyOf(ModeBuild)})
	if err != nil {
		t.Fatal(err)
	}
	if st := other.Authority(); !st.ConsentNeeded {
		t.Errorf("a second session inherited the consent: %+v", st)
	}
}

// vendorYolo stands for a vendor's launch options with an escalation.
type vendorYolo struct{ Yolo bool }

// TestVendorChoiceIsConsent: an escalation the app chose in the vendor
// launch options counts as its consent in Build (the session opens and is
// prompted, reporting agent-autonomous with the flag); the same flag from
// another launch option asks, and vendor options left at their default
// escalate nothing.
func TestVendorChoiceIsConsent(t *testing.T) {
	p, o := escalatingProfile(t, acptest.Script{})
	table := *p.Modes
	table.LaunchEscalation = func(o LaunchOptions) string {
		if v, err := VendorOptions[vendorYolo](o); err == nil && v.Yolo {
			return "--yolo"
		}
		if o.AgentMode == "yolo" {
			return "--yolo"
		}
		return ""
	}
	p.Modes = &table
	cases := []struct {
		name    string
		vendor  any
		mode    string
		flag    string
		consent bool
	}{
		{"chosen", vendorYolo{Yolo: true}, "", "--yolo", false},
		{"not a vendor option", nil, "yolo", "--yolo", true},
		{"default", vendorYolo{}, "", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := o
			o.Vendor, o.AgentMode = c.vendor, c.mode
			h, _ := newHostAndRecorder(t, nil)
			b, err := h.StartProfile(ctxT(t), p, o, Config{ID: "vendor"})
			if err != nil {
				t.Fatal(err)
			}
			s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir(), Policy: policyOf(ModeBuild)})
			if err != nil {
				t.Fatalf("OpenSession in Build: %v", err)
			}
			st := s.Authority()
			if st.Flag != c.flag || st.ConsentNeeded != c.consent || st.Blocked != c.consent {
				t.Fatalf("Authority %+v: want flag %q, consent needed %v", st, c.flag, c.consent)
			}
			_, err = s.Prompt(ctxT(t), acpclient.TextBlock("hi"))
			if c.consent != (err != nil) {
				t.Fatalf("Prompt: %v", err)
			}
			if c.flag != "" && !c.consent && (st.State != AuthorityAgentAutonomous || !strings.Contains(st.Reason, "consented")) {
				t.Errorf("Authority %+v: want agent-autonomous with the app's consent", st)
			}
		})
	}
}

// memHostFS is a HostFS of files in memory, standing for a remote host.
type memHostFS map[string]string

func (m memHostFS) Exists(_ context.Context, p string) (bool, error) { _, ok := m[p]; return ok, nil }
func (m memHostFS) ReadFile(_ context.Context, p string) ([]byte, error) {
	if s, ok := m[p]; ok {
		return []byte(s), nil
	}
	return nil, &fsPathError{p}
}
func (m memHostFS) WriteFile(_ context.Context, p string, data []byte) error {
	m[p] = string(data)
	return nil
}

type fsPathError struct{ path string }

func (e *fsPathError) Error() string { return e.path + ": no such file" }

// TestLearnReadsTheAgentsHost: a table's Learn runs when the session opens,
// on the launch's host file system with its home, the session's cwd and
// the modes the agent offers; the table it returns judges the session, and
// an error keeps the static table and is reported.
func TestLearnReadsTheAgentsHost(t *testing.T) {
	p, o := escalatingProfile(t, acptest.Script{})
	fsys := memHostFS{"/home/u/modes": "default"}
	o.FS, o.Home = fsys, "/home/u"
	cwd := t.TempDir()
	fail := false
	p.Modes = &ModeTable{Source: "static", Learn: func(ctx context.Context, got HostFS, home, dir string, modes []acpclient.Mode) (*ModeTable, error) {
		if fail {
			return nil, errors.New("sftp: connection lost")
		}
		data, err := got.ReadFile(ctx, home+"/modes")
		if err != nil || dir != cwd || len(modes) == 0 {
			t.Errorf("Learn read %q, %v; cwd %q (want %q); modes %v", data, err, dir, cwd, modes)
		}
		return &ModeTable{Safe: []string{string(data)}, Source: "learned"}, nil
	}}
	h, _ := newHostAndRecorder(t, nil)
	b, err := h.StartProfile(ctxT(t), p, o, Config{ID: "learn"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: cwd, Policy: policyOf(ModeBuild)})
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Authority(); st.State != AuthorityProtected {
		t.Errorf("Authority with the learned table %+v, want protected", st)
	}
	fail = true
	s2, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: cwd, Policy: policyOf(ModeBuild)})
	if err != nil {
		t.Fatal(err)
	}
	if st := s2.Authority(); st.State != AuthorityUnknown || st.Blocked || !strings.Contains(st.Reason, "connection lost") {
		t.Errorf("Authority when learning failed %+v, want unknown naming the error", st)
	}
}
