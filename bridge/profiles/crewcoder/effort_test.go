package crewcoder

import (
	"errors"
	"reflect"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/bridgetest"
	"github.com/acphost/acphost/internal/fakebin"
	"github.com/acphost/acphost/internal/waitfor"
)

func TestSetEffortRefusedDuringTurn(t *testing.T) {
	h, rec := bridgetest.NewHost(t, nil)
	script := crewCoderScript()
	script.Prompts = []acptest.Turn{{Steps: []acptest.Step{{Text: "busy"}, {WaitCancel: true}}}}
	b, _ := startCrewCoder(t, h, script, bridge.LaunchOptions{})
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Prompt(bridgetest.Context(t), acpclient.TextBlock("go"))
		done <- err
	}()
	rec.WaitFor("busy", func(ev bridge.Event) bool { return ev.Kind == bridge.KindText && ev.Text == "busy" })
	// The vendor method is outside the protocol's mid-turn allowances.
	if err := s.SetEffort(bridgetest.Context(t), "high"); !errors.Is(err, bridge.ErrTurnRunning) || errors.Is(err, bridge.ErrBusy) {
		t.Errorf("SetEffort during a turn = %v, want ErrTurnRunning", err)
	}
	s.Cancel()
	if err := waitfor.Recv(t, done, "the call to return"); err != nil {
		t.Fatal(err)
	}
}

func TestCrewCoderSetEffort(t *testing.T) {
	h, _ := bridgetest.NewHost(t, nil)
	b, in := startCrewCoder(t, h, crewCoderScript(), bridge.LaunchOptions{})
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetEffort(bridgetest.Context(t), "max"); err != nil {
		t.Fatal(err)
	}
	if got, want := fakebin.SentParams(in.Received(t), "session/set_reasoning_effort"), []string{`{"sessionId":"cc_1","effort":"max"}`}; !reflect.DeepEqual(got, want) {
		t.Fatalf("sent %q, want %q", got, want)
	}
}
