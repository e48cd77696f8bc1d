package acpclient

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkHTTPFlood delivers 200k streamed text chunks through a Conn
// over an HTTPTransport on loopback, one server-sent event per chunk on
// the connection's stream, and in the same iteration the same chunks
// through a Conn over a plain loopback TCP stream of lines. Both servers
// send each chunk as it comes (one write, and for HTTP one flush, each).
// The HTTP time includes the initialize POST that opens the connection.
// x-tcp is the TCP time over the HTTP time (1 is no cost).
func BenchmarkHTTPFlood(b *testing.B) {
	pattern := benchLines(1000)
	httpSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			if r.Header.Get("Acp-Connection-Id") != "" {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			var req struct{ ID json.RawMessage }
			json.NewDecoder(r.Body).Decode(&req)
			w.Header().Set("Acp-Connection-Id", "c")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"protocolVersion":1}}`)
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			f := w.(http.Flusher)
			f.Flush()
			for i := range floodChunks {
				line := pattern[i%len(pattern)]
				if _, err := w.Write(append(append([]byte("data: "), line[:len(line)-1]...), '\n', '\n')); err != nil {
					return
				}
				f.Flush()
			}
			<-r.Context().Done() // until the client closes
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer httpSrv.Close()
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

	var overHTTP, overTCP time.Duration
	for b.Loop() {
		overHTTP += httpFloodOver(b, &HTTPTransport{URL: httpSrv.URL + "/acp"})
		overTCP += floodOver(b, tcpTransport(ln.Addr().String()))
	}
	b.ReportMetric(overTCP.Seconds()/overHTTP.Seconds(), "x-tcp")
	b.ReportMetric(overHTTP.Seconds()/float64(b.N*floodChunks)*1e9, "ns/chunk")
}

// httpFloodOver is floodOver for a transport that sends nothing until
// the Conn initializes.
func httpFloodOver(b *testing.B, t Transport) time.Duration {
	client := &countingClient{target: floodChunks, done: make(chan struct{})}
	start := time.Now()
	c, err := Connect(context.Background(), t, client, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Initialize(context.Background(), &InitializeRequest{}); err != nil {
		b.Fatal(err)
	}
	<-client.done
	elapsed := time.Since(start)
	c.Close()
	return elapsed
}
