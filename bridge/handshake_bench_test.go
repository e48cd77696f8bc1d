package bridge

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// handshakeRounds is how many handshakes of each kind one iteration times.
const handshakeRounds = 20

// BenchmarkHandshake starts the fake agent process and opens a session on
// it, through a Host (Start, then OpenSession) and by hand: the same
// process started with os/exec and sent initialize and session/new as two
// written lines, each answer read as one line. One iteration runs
// handshakeRounds of each, interleaved and rotating which goes first, so
// that all see the same machine, and reports medians and minima over all
// the rounds, which one slow start (another process's burst) does not
// move: the Host's and the floor's median ("host-ms", "hand-ms"), the
// median of the per-round differences ("overhead-ms", the row:
// +0.5 ms, to keep), the difference of the minima ("overhead-min-ms") and
// the floor's median over the Host's ("x-hand").
//
// Two more handshakes per round say where the overhead is: through a Host
// whose transport starts no sentinel (CommandTransport.NoSentinel, the
// floor's way), "overhead-nosentinel-ms"; and on an acpclient.Conn of its
// own, without the bridge and without a sentinel, "overhead-conn-ms". The
// bridge's own share is the difference of those two.
func BenchmarkHandshake(b *testing.B) {
	bin := acptest.BuildBinary(b)
	script := acptest.WriteScript(b, acptest.Script{})
	handshakeByHand(b, bin, script) // warm the binary into the page cache
	handshakeThroughHost(b, bin, script, false)
	var host, hand, diff, bare, conn []time.Duration
	for b.Loop() {
		for i := range handshakeRounds {
			var h, m, n, c time.Duration
			for k := range 4 {
				switch (i + k) % 4 {
				case 0:
					h = handshakeThroughHost(b, bin, script, false)
				case 1:
					m = handshakeByHand(b, bin, script)
				case 2:
					n = handshakeThroughHost(b, bin, script, true)
				case 3:
					c = handshakeThroughConn(b, bin, script)
				}
			}
			host, hand = append(host, h), append(hand, m)
			diff, bare, conn = append(diff, h-m), append(bare, n-m), append(conn, c-m)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(median(host)), "host-ms")
	b.ReportMetric(ms(median(hand)), "hand-ms")
	b.ReportMetric(ms(median(diff)), "overhead-ms")
	b.ReportMetric(ms(slices.Min(host)-slices.Min(hand)), "overhead-min-ms")
	b.ReportMetric(ms(median(bare)), "overhead-nosentinel-ms")
	b.ReportMetric(ms(median(conn)), "overhead-conn-ms")
	b.ReportMetric(median(hand).Seconds()/median(host).Seconds(), "x-hand")
}

// median returns the middle of ds (the upper one of an even count); ds is
// sorted in place.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// handshakeThroughHost times Start and OpenSession on a new Host, its
// agent started with or without a sentinel.
func handshakeThroughHost(b *testing.B, bin, script string, noSentinel bool) time.Duration {
	b.Helper()
	ctx := context.Background()
	h := NewHost(nil)
	go func() {
		for range h.Events() {
		}
	}()
	start := time.Now()
	br, err := h.Start(ctx, Config{Transport: &acpclient.CommandTransport{Path: bin, Args: []string{"-script", script}, NoSentinel: noSentinel}})
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

// handshakeThroughConn times the same two calls on an acpclient.Conn over
// a transport without a sentinel: what the bridge builds on.
func handshakeThroughConn(b *testing.B, bin, script string) time.Duration {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	conn, err := acpclient.Connect(ctx, &acpclient.CommandTransport{Path: bin, Args: []string{"-script", script}, NoSentinel: true},
		handshakeClient{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Initialize(ctx, &acpclient.InitializeRequest{}); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.NewSession(ctx, &acpclient.NewSessionRequest{Cwd: "/w"}); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	conn.Close()
	<-conn.Done()
	return elapsed
}

// handshakeClient is a Client that receives nothing during a handshake.
type handshakeClient struct{}

func (handshakeClient) SessionUpdate(context.Context, *acpclient.SessionNotification) {}

func (handshakeClient) RequestPermission(_ context.Context, _ *acpclient.RequestPermissionRequest, reply func(*acpclient.RequestPermissionResponse, error)) {
	reply(acpclient.PermissionCancelled(), nil)
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
