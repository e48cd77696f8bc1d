package acpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/wire"
)

// replayMiB is the size of the benchmark replay: ACPHOST_BENCH_MIB, else 50.
func replayMiB() int {
	if n, err := strconv.Atoi(os.Getenv("ACPHOST_BENCH_MIB")); err == nil && n > 0 {
		return n
	}
	return 50
}

// replayBytes returns about mib MiB of session/update lines as an agent
// replays a stored session: text chunks, tool calls with locations and raw
// input, tool updates with diffs and text content. It also returns the
// number of lines.
func replayBytes(mib int) ([]byte, int) {
	var buf bytes.Buffer
	para := "The function reads the configuration, validates every field and returns a typed value; errors name the field that failed. "
	code := "func load(path string) (*Config, error) {\n\tdata, err := os.ReadFile(path)\n\tif err != nil {\n\t\treturn nil, fmt.Errorf(\"load %s: %w\", path, err)\n\t}\n\treturn parse(data)\n}\n"
	n := 0
	line := func(update any) {
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": methodSessionUpdate,
			"params": map[string]any{"sessionId": "sess_01JD8X4", "update": update}})
		if err != nil {
			panic(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
		n++
	}
	for i := 0; buf.Len() < mib<<20; i++ {
		id := fmt.Sprintf("call_%d", i)
		path := fmt.Sprintf("/work/project/internal/pkg%d/file%d.go", i%17, i)
		line(map[string]any{"sessionUpdate": UpdateUserMessageChunk, "content": map[string]any{"type": "text", "text": "Please fix the loader in " + path}})
		for j := 0; j < 6; j++ {
			line(map[string]any{"sessionUpdate": UpdateAgentMessageChunk, "content": map[string]any{"type": "text", "text": para[j*10:]}, "messageId": fmt.Sprintf("msg_%d", i)})
		}
		line(map[string]any{"sessionUpdate": UpdateToolCall, "toolCallId": id, "title": "Edit " + path, "kind": ToolKindEdit, "status": ToolStatusPending,
			"locations": []any{map[string]any{"path": path, "line": 12}}, "rawInput": map[string]any{"file_path": path, "old_string": code[:60], "new_string": code}})
		line(map[string]any{"sessionUpdate": UpdateToolCallUpdate, "toolCallId": id, "status": ToolStatusInProgress})
		line(map[string]any{"sessionUpdate": UpdateToolCallUpdate, "toolCallId": id, "status": ToolStatusCompleted,
			"content": []any{
				map[string]any{"type": "diff", "path": path, "oldText": code + code, "newText": code + code + code},
				map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": "Applied the edit.\n" + code}},
			},
			"locations": []any{map[string]any{"path": path, "line": 12}, map[string]any{"path": path}}})
	}
	return buf.Bytes(), n
}

// serveRequests reads the client's lines from r and calls answer with the
// id and method of each request (notifications and junk are skipped), until
// r ends.
func serveRequests(r *bufio.Reader, answer func(id json.RawMessage, method string)) {
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) == nil && m.ID != nil {
			answer(m.ID, m.Method)
		}
	}
}

// replayAgent answers initialize and, for session/load, writes the replay
// and then the load response, as an agent does.
func replayAgent(in io.Reader, out io.Writer, replay []byte) {
	serveRequests(bufio.NewReader(in), func(id json.RawMessage, method string) {
		switch method {
		case "initialize":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`+"\n", id)
		case "session/load":
			for rest := replay; len(rest) > 0; {
				n := min(len(rest), 64<<10)
				if _, err := out.Write(rest[:n]); err != nil {
					return
				}
				rest = rest[n:]
			}
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", id)
		}
	})
}

// replayClient counts what a replay delivers. It takes runs as the bridge
// does (wire.Receiver): text deltas, and the raw bytes of the updates that
// are not message chunks.
type replayClient struct {
	n     atomic.Int64
	bytes int
}

func (c *replayClient) SessionUpdate(ctx context.Context, n *SessionNotification) {
	c.Updates(ctx, []wire.Update[*SessionNotification]{{Note: n}})
}

func (c *replayClient) Updates(_ context.Context, run []wire.Update[*SessionNotification]) {
	c.n.Add(int64(len(run)))
	for i := range run {
		if run[i].IsDelta {
			c.bytes += len(run[i].Delta.Text)
			continue
		}
		c.bytes += len(run[i].Raw)
		switch u := run[i].Note.Update.(type) {
		case *AgentMessageChunk:
			c.bytes += len(u.Content.Text)
		case *ToolCallProgress:
			for _, tc := range u.Content {
				c.bytes += len(tc.NewText)
			}
		}
	}
}

func (c *replayClient) RequestPermission(_ context.Context, _ *RequestPermissionRequest, reply func(*RequestPermissionResponse, error)) {
	reply(PermissionCancelled(), nil)
}

// loadOnce loads a session through a Conn whose agent replays replay, and
// returns the time from the load request to its return.
func loadOnce(b *testing.B, replay []byte, lines int) time.Duration {
	cr, aw := io.Pipe()
	ar, cw := io.Pipe()
	go replayAgent(ar, aw, replay)
	client := &replayClient{}
	c := NewConn(pipeStream{Reader: cr, Writer: cw, closer: multiCloser{cr, cw, ar, aw}}, client, nil)
	defer func() { c.Close(); <-c.Done() }()
	ctx := context.Background()
	if _, err := c.Initialize(ctx, nil); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if _, err := c.LoadSession(ctx, &LoadSessionRequest{SessionID: "sess_01JD8X4", Cwd: "/work"}); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	if got := client.n.Load(); got != int64(lines) {
		b.Fatalf("%d updates delivered, want %d", got, lines)
	}
	return elapsed
}

type multiCloser []io.Closer

func (m multiCloser) Close() error {
	for _, c := range m {
		c.Close()
	}
	return nil
}

// floorUpdate is the floor's hand-written typed decode of one update:
// the fields of every kind in the replay, content being a block (chunks)
// or a list (tool calls).
type floorUpdate struct {
	SessionUpdate string             `json:"sessionUpdate"`
	Content       floorContent       `json:"content"`
	MessageID     *string            `json:"messageId"`
	ToolCallID    string             `json:"toolCallId"`
	Title         *string            `json:"title"`
	Kind          *string            `json:"kind"`
	Status        *string            `json:"status"`
	Locations     []ToolCallLocation `json:"locations"`
	RawInput      json.RawMessage    `json:"rawInput"`
	RawOutput     json.RawMessage    `json:"rawOutput"`
}

type floorContent struct {
	Block *contentBlockFields
	List  []struct {
		Type    string              `json:"type"`
		Content *contentBlockFields `json:"content"`
		Path    string              `json:"path"`
		OldText *string             `json:"oldText"`
		NewText string              `json:"newText"`
	}
}

func (f *floorContent) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '[' {
		return json.Unmarshal(data, &f.List)
	}
	return json.Unmarshal(data, &f.Block)
}

type floorLine struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		SessionID string      `json:"sessionId"`
		Update    floorUpdate `json:"update"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
}

// floorOnce decodes the same bytes, from a pipe written the same way, with
// a bufio loop and one typed json.Unmarshal per line.
func floorOnce(b *testing.B, replay []byte, lines int) time.Duration {
	pr, pw := io.Pipe()
	start := time.Now()
	go func() {
		for rest := replay; len(rest) > 0; {
			n := min(len(rest), 64<<10)
			pw.Write(rest[:n])
			rest = rest[n:]
		}
		pw.Close()
	}()
	r := bufio.NewReaderSize(pr, 64<<10)
	got := 0
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		var m floorLine
		if err := json.Unmarshal(line, &m); err != nil {
			b.Fatal(err)
		}
		got++
	}
	if got != lines {
		b.Fatalf("%d lines, want %d", got, lines)
	}
	return time.Since(start)
}

// BenchmarkReplay loads a session whose agent replays ACPHOST_BENCH_MIB
// (default 50) MiB of history through a Conn, and reports its speed as a
// ratio to the floor, a typed encoding/json loop over the same bytes, timed
// in the same iteration ("x-floor": above 1 is faster than the floor).
func BenchmarkReplay(b *testing.B) {
	replay, lines := replayBytes(replayMiB())
	b.SetBytes(int64(len(replay)))
	var ours, floor time.Duration
	for b.Loop() {
		floor += floorOnce(b, replay, lines)
		ours += loadOnce(b, replay, lines)
	}
	b.ReportMetric(floor.Seconds()/ours.Seconds(), "x-floor")
	b.ReportMetric(ours.Seconds()/float64(b.N), "s-conn")
	b.ReportMetric(floor.Seconds()/float64(b.N), "s-floor")
}
