//go:build interop

package bridge

// ACP over WebSocket against an implementation of the remote transport
// draft that is not ours: the official TypeScript SDK's server transport
// (AcpServer on the ws library), serving the small agent of
// internal/peertest/testdata/wsagent.mjs. .ci/acceptance-agents.sh
// installs the SDK release into $ACPHOST_ACCEPTANCE_DIR/ws-sdk; without it
// the test is skipped.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/internal/peertest"
	"github.com/acphost/acphost/internal/waitfor"
)

// startWSAgent runs wsagent.mjs and returns its port.
func startWSAgent(t *testing.T) int {
	t.Helper()
	dir := os.Getenv("ACPHOST_ACCEPTANCE_DIR")
	if dir == "" {
		t.Skip("ACPHOST_ACCEPTANCE_DIR is not set (.ci/acceptance-agents.sh installs ws-sdk there)")
	}
	sdk := filepath.Join(dir, "ws-sdk")
	if _, err := os.Stat(filepath.Join(sdk, "node_modules", "ws")); err != nil {
		t.Skipf("ws-sdk is not installed (.ci/acceptance-agents.sh DIR ws-sdk): %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	script, err := filepath.Abs(filepath.Join("..", "internal", "peertest", "testdata", "wsagent.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, script, sdk)
	cmd.Env = peertest.Env(t)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		stdin.Close() // it exits when its stdin closes
		waitfor.Recv(t, exited, "wsagent.mjs to exit after its stdin closed")
	})
	ports := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var port int
			if _, err := fmt.Sscanf(sc.Text(), "PORT %d", &port); err == nil {
				ports <- port
			}
		}
		io.Copy(io.Discard, out)
	}()
	return waitfor.Recv(t, ports, "wsagent.mjs to print its port")
}

// cutter forwards TCP connections to a backend and can cut them all, as a
// network drop would (no WebSocket close message).
type cutter struct {
	ln      net.Listener
	backend string
	mu      sync.Mutex
	conns   []net.Conn
}

func newCutter(t *testing.T, backend string) *cutter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutter{ln: ln, backend: backend}
	t.Cleanup(func() { ln.Close(); c.cut() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", backend)
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in, out)
			c.mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	return c
}

func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

func TestInteropWebSocketTypeScriptSDKServer(t *testing.T) {
	port := startWSAgent(t)
	proxy := newCutter(t, fmt.Sprintf("127.0.0.1:%d", port))
	h, rec := newHostAndRecorder(t, nil)
	url := "ws://" + proxy.ln.Addr().String() + "/acp"
	b, err := h.Start(ctxT(t), Config{ID: "tsws", Transport: &acpclient.WebSocketTransport{URL: url}})
	if err != nil {
		t.Fatalf("initialize over the TypeScript SDK's WebSocket server: %v", err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if stop, err := s.Prompt(ctxT(t), acpclient.TextBlock("first")); err != nil || stop != acpclient.StopEndTurn {
		t.Fatalf("prompt: %q %v", stop, err)
	}
	rec.waitFor("the echoed prompt", func(ev Event) bool { return ev.Kind == KindText && ev.Text == "first" })

	proxy.cut()
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
		if ev.Kind == KindSession && ev.Bridge == "tsws" {
			readies = append(readies, ev.SessionReady)
		}
	}
	if len(readies) != 2 || !readies[1].Resumed || readies[1].Replaced != "" {
		t.Fatalf("session events %+v, want the session resumed (session/load) after reconnecting:\n%s", readies, rec.summary())
	}
}
