package acpclient

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"testing"
)

// benchAgent is the agent end of a call benchmark: it answers each request
// the Conn sends with result, and writes each line of ask as a request
// whose answer it then reads.
type benchAgent struct {
	conn net.Conn
	r    *bufio.Reader
}

func newBenchConn(b *testing.B, client Client) (*Conn, *benchAgent) {
	b.Helper()
	ct, at := NewInMemoryTransports()
	c, err := Connect(context.Background(), ct, client, nil)
	if err != nil {
		b.Fatal(err)
	}
	a, _ := at.Connect(context.Background())
	agent := &benchAgent{conn: a.(net.Conn), r: bufio.NewReader(a)}
	b.Cleanup(func() { c.Close(); a.Close() })
	errc := make(chan error, 1)
	go func() { _, err := c.Initialize(context.Background(), nil); errc <- err }()
	agent.answer(`{"protocolVersion":1,"agentCapabilities":{},"authMethods":[]}`)
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	return c, agent
}

// answer reads one request and answers it with result.
func (a *benchAgent) answer(result string) {
	line, err := a.r.ReadBytes('\n')
	if err != nil {
		return
	}
	var m struct{ ID json.RawMessage }
	json.Unmarshal(line, &m)
	fmt.Fprintf(a.conn, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, result)
}

// BenchmarkPromptRoundTrip measures one session/prompt call: the request
// encoded and written, the agent's answer read, matched and decoded.
func BenchmarkPromptRoundTrip(b *testing.B) {
	c, agent := newBenchConn(b, &countingClient{})
	go func() {
		for range b.N {
			agent.answer(`{"stopReason":"end_turn"}`)
		}
	}()
	req := &PromptRequest{SessionID: "sess_01JD8X4", Prompt: []ContentBlock{{Type: ContentText, Text: "Explain main.go"}}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Prompt(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPermissionRoundTrip measures one session/request_permission
// from the agent: the request read and dispatched, the Client's answer
// encoded and written.
func BenchmarkPermissionRoundTrip(b *testing.B) {
	_, agent := newBenchConn(b, &countingClient{})
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		fmt.Fprintf(agent.conn, `{"jsonrpc":"2.0","id":%d,"method":"session/request_permission","params":{"sessionId":"sess_01JD8X4","toolCall":{"toolCallId":"call_1","title":"Run ls","kind":"execute"},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}`+"\n", i+100)
		if _, err := agent.r.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
	}
}
