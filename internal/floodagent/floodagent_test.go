package floodagent

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	RunIfProcess()
	goleak.VerifyTestMain(m)
}

// The agent answers the handshake and floods each prompt with exactly the
// chunks (and tool calls) asked for, then answers it; Close ends it, also
// in the middle of a flood nobody reads.
func TestFloodsAndEnds(t *testing.T) {
	ctx := context.Background()
	s, err := (&Transport{Chunks: 1000, ToolEvery: 100}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in := bufio.NewScanner(s)
	send := func(id int, method string) {
		fmt.Fprintf(s, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"sessionId":"flood-1"}}`+"\n", id, method)
	}
	send(1, "initialize")
	send(2, "session/new")
	send(3, "session/prompt")
	var chunks, tools, results int
	for results < 3 && in.Scan() {
		line := in.Text()
		switch {
		case strings.Contains(line, `"agent_message_chunk"`):
			chunks++
		case strings.Contains(line, `"tool_call"`), strings.Contains(line, `"tool_call_update"`):
			tools++
		case strings.Contains(line, `"result"`):
			results++
		}
	}
	if chunks != 1000 || tools != 20 || !strings.Contains(in.Text(), `"end_turn"`) {
		t.Fatalf("%d chunks, %d tool lines, last %q; want 1000, 20 and the prompt's answer", chunks, tools, in.Text())
	}
	send(4, "session/prompt") // a flood nobody reads
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// A Sink reads a whole flood, tool lines included, and is ready for the
// next one.
func TestSinkCountsFloods(t *testing.T) {
	k, err := NewSink(context.Background(), &Transport{Chunks: 5000, ToolEvery: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	for range 2 {
		if err := k.Flood(); err != nil {
			t.Fatal(err)
		}
	}
	if cpu, err := ProcessCPU(); err != nil || cpu <= 0 {
		t.Fatalf("ProcessCPU = %v, %v", cpu, err)
	}
}

// A Process agent is this test binary again, in a process of its own: a
// Sink reads its floods whole, and closing it ends the process.
func TestProcessFloods(t *testing.T) {
	k, err := NewSink(context.Background(), &Process{Chunks: 3000, ToolEvery: 100})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := k.Flood(); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
}

// A varied flood is valid JSON on every line, in both key orders, with and
// without message ids and _meta, and its text decodes to Text's.
func TestVariedFloodDecodesToText(t *testing.T) {
	const chunks = 100
	s, err := (&Transport{Chunks: chunks, Varied: true}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fmt.Fprintf(s, `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"flood-1"}}`+"\n")
	in := bufio.NewScanner(s)
	var text []byte
	forms := map[string]int{}
	for range chunks {
		if !in.Scan() {
			t.Fatal(in.Err())
		}
		var m struct {
			Params struct {
				SessionID string `json:"sessionId"`
				Update    struct {
					Kind      string          `json:"sessionUpdate"`
					MessageID *string         `json:"messageId"`
					Meta      json.RawMessage `json:"_meta"`
					Content   struct{ Type, Text string }
				} `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &m); err != nil {
			t.Fatalf("%v in %s", err, in.Bytes())
		}
		u := m.Params.Update
		if m.Params.SessionID != "flood-1" || u.Kind != "agent_message_chunk" || u.Content.Type != "text" {
			t.Fatalf("not a text chunk of flood-1: %s", in.Bytes())
		}
		text = append(text, u.Content.Text...)
		switch line := in.Text(); {
		case u.Meta != nil:
			forms["meta "+string(u.Meta)]++
		case u.MessageID == nil:
			forms["no message id"]++
		case strings.HasPrefix(line, `{"jsonrpc":"2.0","method":"session/update","params":{"update"`):
			forms["update first"]++
		default:
			forms["usual"]++
		}
	}
	if want := Text(chunks, true); string(text) != string(want) {
		t.Fatalf("text %q, want %q", text, want)
	}
	// Each _meta differs, so 25 of them, and 25 of each other form.
	if len(forms) != 28 || forms["usual"] != 25 || forms["update first"] != 25 || forms["no message id"] != 25 {
		t.Fatalf("forms %v", forms)
	}
}
