package acpclient

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// BenchmarkWebSocketFlood delivers 200k streamed text chunks through a
// Conn over a WebSocketTransport on loopback, one WebSocket message per
// chunk as the draft frames them, and in the same iteration the same
// chunks through a Conn over a plain loopback TCP stream of lines. Both
// servers send each chunk as it comes (one write each), as an agent
// does. x-tcp is the TCP time over the WebSocket time: what the framing
// costs on both ends (1 is none).
func BenchmarkWebSocketFlood(b *testing.B) {
	pattern := benchLines(1000)
	wsSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		for i := range floodChunks {
			line := pattern[i%len(pattern)]
			if err := ws.Write(r.Context(), websocket.MessageText, line[:len(line)-1]); err != nil {
				return
			}
		}
		ws.Read(r.Context()) // until the client closes
	}))
	defer wsSrv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for i := range floodChunks {
					if _, err := c.Write(pattern[i%len(pattern)]); err != nil {
						return
					}
				}
				c.Read(make([]byte, 1)) // until the client closes
			}()
		}
	}()

	url := "ws" + strings.TrimPrefix(wsSrv.URL, "http")
	var overWS, overTCP time.Duration
	for b.Loop() {
		overWS += floodOver(b, &WebSocketTransport{URL: url})
		overTCP += floodOver(b, tcpTransport(ln.Addr().String()))
	}
	b.ReportMetric(overTCP.Seconds()/overWS.Seconds(), "x-tcp")
	b.ReportMetric(overWS.Seconds()/float64(b.N*floodChunks)*1e9, "ns/chunk")
}

type tcpTransport string

func (a tcpTransport) Connect(ctx context.Context) (io.ReadWriteCloser, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", string(a))
}

// floodOver times a Conn over t until floodChunks chunks are delivered.
func floodOver(b *testing.B, t Transport) time.Duration {
	client := &countingClient{target: floodChunks, done: make(chan struct{})}
	start := time.Now()
	c, err := Connect(context.Background(), t, client, nil)
	if err != nil {
		b.Fatal(err)
	}
	<-client.done
	elapsed := time.Since(start)
	c.Close()
	return elapsed
}
