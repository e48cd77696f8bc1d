package bridge

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/fakebin"
)

const thoughtLevelOptions = `[{"id":"model","name":"Model","category":"model","type":"select","currentValue":"m1","options":[{"value":"m1","name":"M1"}]},
	{"id":"reasoning","name":"Reasoning","category":"thought_level","type":"select","currentValue":"medium",
	 "options":[{"group":"fast","name":"Fast","options":[{"value":"low","name":"Low"}]},{"value":"medium","name":"Medium"},{"value":"high","name":"High"}]}]`

func TestSetEffortThroughThoughtLevelOption(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	script := acptest.Script{NewSession: acptest.NewSessionScript{SessionIDs: []string{"s1"}, ConfigOptions: raw(thoughtLevelOptions)}}
	in := fakebin.Install(t, t.TempDir(), "agent", script, "")
	b, err := h.Start(ctxT(t), Config{ID: "a", Transport: &acpclient.CommandTransport{Path: in.Path}})
	if err != nil {
		t.Fatal(err)
	}
	store := NewFileStore(t.TempDir() + "/s.json")
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir(), Store: store, Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetEffort(ctxT(t), "high"); err != nil {
		t.Fatal(err)
	}
	if got, want := fakebin.SentParams(in.Received(t), "session/set_config_option"), []string{`{"sessionId":"s1","configId":"reasoning","value":"high"}`}; !reflect.DeepEqual(got, want) {
		t.Fatalf("sent %q, want %q", got, want)
	}
	if o := thoughtLevelOption(s.ConfigOptions()); o == nil || o.Value != "high" {
		t.Errorf("options after SetEffort %+v", s.ConfigOptions())
	}
	rec.waitFor("config event", func(ev Event) bool { return ev.Kind == KindConfig })
	if r, ok, _ := store.Load("k"); !ok || r.Effort != "high" {
		t.Errorf("stored %+v", r)
	}

	// A level the agent does not offer is refused before anything is sent,
	// naming the levels it does (groups flattened).
	err = s.SetEffort(ctxT(t), "turbo")
	if !errors.Is(err, ErrUnknownEffort) || !strings.Contains(err.Error(), "low, medium, high") {
		t.Fatalf("SetEffort(turbo) = %v", err)
	}
	if n := len(fakebin.SentParams(in.Received(t), "session/set_config_option")); n != 1 {
		t.Errorf("%d set_config_option requests, want 1", n)
	}
}

func TestSetEffortUnsupported(t *testing.T) {
	h, _ := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), agentConfig(t, "plain", acptest.Script{}))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetEffort(ctxT(t), "high"); !errors.Is(err, acpclient.ErrUnsupported) {
		t.Fatalf("SetEffort = %v, want ErrUnsupported", err)
	}
}
