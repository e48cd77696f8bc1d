package acptest_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
)

// A Transport is what acpclient and bridge take.
var _ acpclient.Transport = (*acptest.Transport)(nil)

// rawCall writes one request line on s and returns the next line read.
func rawCall(t *testing.T, s io.ReadWriter, r *bufio.Reader, line string) string {
	t.Helper()
	if _, err := io.WriteString(s, line+"\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
	got, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return strings.TrimSpace(got)
}

func TestTransportStartsAFreshAgentPerConnect(t *testing.T) {
	tr := &acptest.Transport{Script: acptest.Script{NewSession: acptest.NewSessionScript{SessionIDs: []string{"s1", "s2"}}}}
	for i := range 2 {
		s, err := tr.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(s)
		rawCall(t, s, r, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
		// A fresh agent hands out the script's first id again.
		if got := rawCall(t, s, r, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`); got != `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}` {
			t.Errorf("connection %d: session/new answered %s", i, got)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	agents := tr.Agents()
	if len(agents) != 2 || agents[0] == agents[1] {
		t.Fatalf("Agents() = %v, want two distinct agents", agents)
	}
	for i, a := range agents {
		var methods []string
		for _, m := range a.Received() {
			methods = append(methods, m.Method)
		}
		if want := []string{"initialize", "session/new"}; !reflect.DeepEqual(methods, want) {
			t.Errorf("agent %d received %q, want %q", i, methods, want)
		}
	}
}

func TestTransportCloseEndsTheAgent(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	// An agent that outlives its input and a turn that never answers: only
	// Close can end them.
	tr := &acptest.Transport{Script: acptest.Script{
		StayAfterEOF: true,
		Prompts:      []acptest.Turn{{IgnoreCancel: true, Steps: []acptest.Step{{Text: "working"}, {Hang: true}}}},
	}}
	s, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(s)
	rawCall(t, s, r, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`)
	if got := rawCall(t, s, r, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess_1","prompt":[{"type":"text","text":"go"}]}}`); !strings.Contains(got, "working") {
		t.Fatalf("turn did not start: %s", got)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return: the agent did not stop")
	}
}

func TestTransportConnectAfterContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tr := &acptest.Transport{}
	if _, err := tr.Connect(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Connect on a done context: %v, want context.Canceled", err)
	}
	if n := len(tr.Agents()); n != 0 {
		t.Errorf("%d agents started on a done context", n)
	}
}

// The reason for Transport: a bridge restarts its agent by connecting
// again, and gets a new one.
func TestTransportRestartsUnderABridge(t *testing.T) {
	exit := 3
	tr := &acptest.Transport{Script: acptest.Script{
		NewSession:  acptest.NewSessionScript{SessionIDs: []string{"sess_R"}},
		LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_R"}},
		Prompts: []acptest.Turn{
			{Match: "crash", Steps: []acptest.Step{{Exit: &exit}}},
			{Steps: []acptest.Step{{Text: "fresh"}}},
		},
	}}
	ctx := context.Background()
	host := bridge.NewHost(nil)
	go func() {
		for range host.Events() {
		}
	}()
	defer host.Shutdown(ctx)
	b, err := host.Start(ctx, bridge.Config{ID: "r", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctx, acpclient.TextBlock("crash now")); err == nil {
		t.Fatal("prompt to a crashing agent succeeded")
	}
	stop, err := s.Prompt(ctx, acpclient.TextBlock("again"))
	if err != nil || stop != acpclient.StopEndTurn {
		t.Fatalf("prompt after the crash: %q %v", stop, err)
	}
	agents := tr.Agents()
	if len(agents) != 2 {
		t.Fatalf("%d agents started, want 2 (the first and its restart)", len(agents))
	}
	var methods []string
	for _, m := range agents[1].Received() {
		methods = append(methods, m.Method)
	}
	if want := []string{"initialize", "session/load", "session/prompt"}; !reflect.DeepEqual(methods, want) {
		t.Errorf("restarted agent received %q, want %q", methods, want)
	}
}
