package bridge

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// BenchmarkHandshake starts the fake agent process and opens a session on
// it, through a Host (Start, then OpenSession) and, in the same iteration,
// by hand: the same process started with os/exec and sent initialize and
// session/new as two written lines, each answer read as one line. It
// reports what the Host adds over that floor ("overhead-ms", the issue's
// row: +0.5 ms, to keep) and the floor's time over the Host's ("x-hand").
func BenchmarkHandshake(b *testing.B) {
	bin := acptest.BuildBinary(b)
	script := acptest.WriteScript(b, acptest.Script{})
	handshakeByHand(b, bin, script) // warm the binary into the page cache
	var host, hand time.Duration
	for b.Loop() {
		host += handshakeThroughHost(b, bin, script)
		hand += handshakeByHand(b, bin, script)
	}
	b.ReportMetric(float64((host-hand).Microseconds())/1000/float64(b.N), "overhead-ms")
	b.ReportMetric(hand.Seconds()/host.Seconds(), "x-hand")
}

// handshakeThroughHost times Start and OpenSession on a new Host.
func handshakeThroughHost(b *testing.B, bin, script string) time.Duration {
	b.Helper()
	ctx := context.Background()
	h := NewHost(nil)
	go func() {
		for range h.Events() {
		}
	}()
	start := time.Now()
	br, err := h.Start(ctx, Config{Transport: &acpclient.CommandTransport{Path: bin, Args: []string{"-script", script}}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := br.OpenSession(ctx, SessionConfig{Cwd: "/w"}); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	if err := h.Shutdown(ctx); err != nil {
		b.Fatal(err)
	}
	return elapsed
}

// handshakeByHand times the floor: the process, two requests, two answers.
func handshakeByHand(b *testing.B, bin, script string) time.Duration {
	b.Helper()
	start := time.Now()
	cmd := exec.Command(bin, "-script", script)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	answers := bufio.NewReader(stdout)
	call := func(line string) {
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			b.Fatal(err)
		}
		if _, err := answers.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
	}
	call(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}}}`)
	call(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, "/w"))
	elapsed := time.Since(start)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	return elapsed
}
