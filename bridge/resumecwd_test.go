package bridge

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
)

// loadCwd returns the cwd of the last session/load or session/resume the
// agent received.
func loadCwd(t *testing.T, tr *acptest.Transport) string {
	t.Helper()
	cwd := ""
	for _, a := range tr.Agents() {
		for _, m := range a.Received() {
			if m.Method == "session/load" || m.Method == "session/resume" {
				var p struct {
					Cwd string `json:"cwd"`
				}
				if err := json.Unmarshal(m.Params, &p); err != nil {
					t.Fatal(err)
				}
				cwd = p.Cwd
			}
		}
	}
	return cwd
}

// A resumed session keeps its recorded directory: no Cwd means the
// record's, another Cwd is refused naming both (and leaves the key free),
// and MoveCwd moves it, which the record then says.
func TestResumeKeepsRecordedCwd(t *testing.T) {
	tr := &acptest.Transport{Script: acptest.Script{LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_old"}}}}
	j := newLifeJournal()
	j.SaveSession(ctxT(t), "k", Record{Key: "k", NativeSessionID: "sess_old", Cwd: "/recorded"})
	h, _ := newHostAndRecorder(t, &HostOptions{Journal: j})
	b, err := h.Start(ctxT(t), Config{ID: "cw", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}

	_, err = b.OpenSession(ctxT(t), SessionConfig{Key: "k", Cwd: "/elsewhere"})
	if !errors.Is(err, ErrCwdChanged) || !strings.Contains(err.Error(), "/recorded") || !strings.Contains(err.Error(), "/elsewhere") {
		t.Fatalf("resume in another directory: %v; want ErrCwdChanged naming /recorded and /elsewhere", err)
	}
	if got := loadCwd(t, tr); got != "" {
		t.Fatalf("the refused resume reached the agent with cwd %q", got)
	}

	s, err := b.OpenSession(ctxT(t), SessionConfig{Key: "k"})
	if err != nil {
		t.Fatalf("resume without a Cwd (the key is free again): %v", err)
	}
	if got := loadCwd(t, tr); got != "/recorded" {
		t.Errorf("the agent loaded the session in %q, want /recorded", got)
	}
	if err := s.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if rec, _, _ := j.LoadSession(ctxT(t), "k"); rec.Cwd != "/recorded" {
		t.Errorf("the record names %q after a plain resume, want /recorded", rec.Cwd)
	}

	s, err = b.OpenSession(ctxT(t), SessionConfig{Key: "k", Cwd: "/elsewhere", MoveCwd: true})
	if err != nil {
		t.Fatalf("resume with MoveCwd: %v", err)
	}
	if got := loadCwd(t, tr); got != "/elsewhere" {
		t.Errorf("the moved session was loaded in %q, want /elsewhere", got)
	}
	if err := s.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if rec, _, _ := j.LoadSession(ctxT(t), "k"); rec.Cwd != "/elsewhere" {
		t.Errorf("the record names %q after the move, want /elsewhere", rec.Cwd)
	}
}
