//go:build interop

package bridge

// ACP over Streamable HTTP against the official TypeScript SDK's server
// transport (AcpServer's Node request handler), serving the agent of
// internal/peertest/testdata/wsagent.mjs, which serves both profiles;
// skipped without the SDK, as the WebSocket test is.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
)

func TestInteropHTTPTypeScriptSDKServer(t *testing.T) {
	port := startWSAgent(t)
	proxy := newCutter(t, fmt.Sprintf("127.0.0.1:%d", port))
	h, rec := newHostAndRecorder(t, nil)
	url := "http://" + proxy.ln.Addr().String() + "/acp"
	b, err := h.Start(ctxT(t), Config{ID: "tshttp", Transport: &acpclient.HTTPTransport{URL: url}})
	if err != nil {
		t.Fatalf("initialize over the TypeScript SDK's Streamable HTTP server: %v", err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if stop, err := s.Prompt(ctxT(t), acpclient.TextBlock("first")); err != nil || stop != acpclient.StopEndTurn {
		t.Fatalf("prompt: %q %v", stop, err)
	}
	rec.waitFor("the echoed prompt", func(ev Event) bool { return ev.Kind == KindText && ev.Text == "first" })

	proxy.cut() // the connection's and the session's streams drop
	exited := rec.waitFor("the agent reported gone after the drop", func(ev Event) bool { return ev.Kind == KindExited })
	if exited.Err == nil || !strings.Contains(exited.Err.Error(), "/acp") {
		t.Errorf("exit after the drop: %v, want the endpoint named", exited.Err)
	}
	if stop, err := s.Prompt(ctxT(t), acpclient.TextBlock("second")); err != nil || stop != acpclient.StopEndTurn {
		t.Fatalf("prompt after reconnecting: %q %v", stop, err)
	}
	rec.waitFor("the second echo", func(ev Event) bool { return ev.Kind == KindText && ev.Text == "second" })
	var readies []*SessionReady
	for _, ev := range rec.snapshot() {
		if ev.Kind == KindSession && ev.Bridge == "tshttp" {
			readies = append(readies, ev.SessionReady)
		}
	}
	if len(readies) != 2 || !readies[1].Resumed || readies[1].Replaced != "" {
		t.Fatalf("session events %+v, want the session resumed (session/load) after reconnecting:\n%s", readies, rec.summary())
	}
}
