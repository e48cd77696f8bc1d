//go:build !plainwire

package acpclient

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/acphost/acphost/internal/wire"
)

// deltaClient takes text deltas and batches of notifications, and logs
// each delivery in order as the update it stands for.
type deltaClient struct {
	mu     sync.Mutex
	log    []string
	runs   int // TextDeltas calls
	panicc string
	notify chan struct{}
}

func newDeltaClient() *deltaClient { return &deltaClient{notify: make(chan struct{}, 1)} }

func (c *deltaClient) add(entries ...string) {
	c.mu.Lock()
	c.log = append(c.log, entries...)
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

func (c *deltaClient) Updates(ctx context.Context, run []wire.Update[*SessionNotification]) {
	splitRun(ctx, run, c.SessionUpdates, c.TextDeltas)
}

func (c *deltaClient) TextDeltas(ctx context.Context, ds []wire.TextDelta) {
	var entries []string
	for _, d := range ds {
		if c.panicc != "" && d.Text == c.panicc {
			panic("client fault")
		}
		id := "-"
		if d.HasMessageID {
			id = d.MessageID
		}
		entry := fmt.Sprintf("delta %s %s %s %q", d.SessionID, d.Kind, id, d.Text)
		if d.Meta != nil {
			entry += " " + string(d.Meta)
		}
		entries = append(entries, entry)
	}
	c.mu.Lock()
	c.runs++
	c.mu.Unlock()
	c.add(entries...)
}

func (c *deltaClient) SessionUpdates(ctx context.Context, ns []*SessionNotification) {
	for _, n := range ns {
		c.SessionUpdate(ctx, n)
	}
}

func (c *deltaClient) SessionUpdate(ctx context.Context, n *SessionNotification) {
	c.add(fmt.Sprintf("update %s %s", n.SessionID, n.Update.Kind()))
}

func (c *deltaClient) RequestPermission(ctx context.Context, req *RequestPermissionRequest, reply func(*RequestPermissionResponse, error)) {
	reply(PermissionCancelled(), nil)
}

// wait waits until n deliveries are logged and returns the log.
func (c *deltaClient) wait(t *testing.T, n int) []string {
	t.Helper()
	defer func() {
		if t.Failed() {
			c.mu.Lock()
			t.Logf("%d deliveries of %d: %q", len(c.log), n, c.log[max(0, len(c.log)-3):])
			c.mu.Unlock()
		}
	}()
	waitUntil(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.log) >= n
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.log...)
}

// deltaLine is a line the agent sends and the delivery it must make.
type deltaLine struct{ line, want string }

// deltaLines is a stream mixing text deltas with chunks that are not one
// (_meta, other content, rich blocks) and other updates, in two sessions.
func deltaLines() []deltaLine {
	upd := func(session, update string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + session + `","update":` + update + `}}`
	}
	var ls []deltaLine
	for i := range 300 {
		s := []string{"s1", "s2"}[i/40%2]
		switch i % 50 {
		case 7: // the chunk's own _meta is the delta's
			ls = append(ls, deltaLine{upd(s, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"m"},"_meta":{"k":`+fmt.Sprint(i)+`}}`),
				fmt.Sprintf(`delta %s agent_message_chunk - "m" {"k":%d}`, s, i)})
		case 8: // the notification's is not
			ls = append(ls, deltaLine{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + s + `","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"m"}},"_meta":{"k":1}}}`,
				"update " + s + " agent_message_chunk"})
		case 13:
			ls = append(ls, deltaLine{upd(s, `{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read"}`), "update " + s + " tool_call"})
		case 21:
			ls = append(ls, deltaLine{upd(s, `{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"AA==","mimeType":"image/png"}}`), "update " + s + " agent_message_chunk"})
		case 22:
			ls = append(ls, deltaLine{upd(s, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a","annotations":{"priority":1}}}`), "update " + s + " agent_message_chunk"})
		case 23:
			ls = append(ls, deltaLine{upd(s, `{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"t","_meta":{}}}`), "update " + s + " agent_thought_chunk"})
		case 30:
			ls = append(ls, deltaLine{upd(s, `{"sessionUpdate":"user_message_chunk","messageId":"u1","content":{"type":"text","text":"line\nnext \u00e9"}}`),
				fmt.Sprintf("delta %s user_message_chunk u1 %q", s, "line\nnext é")})
		case 31:
			ls = append(ls, deltaLine{upd(s, `{"sessionUpdate":"agent_thought_chunk","messageId":null,"content":{"type":"text","text":""}}`),
				fmt.Sprintf("delta %s agent_thought_chunk - %q", s, "")})
		default:
			text := fmt.Sprint("chunk ", i)
			ls = append(ls, deltaLine{upd(s, `{"sessionUpdate":"agent_message_chunk","messageId":"m`+fmt.Sprint(i/100)+`","content":{"type":"text","text":"`+text+`"}}`),
				fmt.Sprintf("delta %s agent_message_chunk m%d %q", s, i/100, text)})
		}
	}
	return ls
}

// A TextDeltaHandler gets every text delta as a TextDelta and every other
// update as a notification, in the agent's order; the queue gives back
// every byte it charged for them.
func TestTextDeltasInAgentOrder(t *testing.T) {
	client := newDeltaClient()
	c, p := newPair(t, client, nil)
	ls := deltaLines()
	var stream strings.Builder
	var want []string
	for _, l := range ls {
		stream.WriteString(l.line + "\n")
		want = append(want, l.want)
	}
	// Written at once, so the connection reads them in batches and runs.
	if _, err := io.WriteString(p.conn, stream.String()); err != nil {
		t.Fatal(err)
	}
	got := client.wait(t, len(want))
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delivery %d is %s, want %s (line %s)", i, got[i], want[i], ls[i].line)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d deliveries, want %d", len(got), len(want))
	}
	waitUntil(t, func() bool { // doneRun follows the last delivery
		c.queue.mu.Lock()
		defer c.queue.mu.Unlock()
		return c.queue.handled == uint64(len(want))
	})
	c.queue.mu.Lock()
	held := c.queue.bytes
	c.queue.mu.Unlock()
	if held != 0 {
		t.Fatalf("the queue still counts %d bytes with everything delivered", held)
	}
	t.Logf("%d deltas in %d TextDeltas calls", strings.Count(strings.Join(want, "\n"), "delta "), client.runs)
}

// TextDelta.Notification is the notification the general path decodes
// from the same line.
func TestTextDeltaNotification(t *testing.T) {
	for _, l := range deltaLines() {
		if !strings.HasPrefix(l.want, "delta ") {
			continue
		}
		var d chunkDecoder
		d.scan.Lean = true
		in := d.decode([]byte(l.line), false)
		if in == nil || in.delta == nil {
			t.Fatalf("line %s: no delta", l.line)
		}
		got, want := deltaNote(in.delta), generalDecode([]byte(l.line))
		if got.SessionID != want.SessionID || !reflect.DeepEqual(got.Update, want.Update) {
			t.Fatalf("line %s: notification %+v %#v, want %+v %#v", l.line, got, got.Update, want, want.Update)
		}
	}
}

// A panic in the receiver is logged and costs its run alone: the text
// deltas of one session delivered with the one that panicked. A
// notification or another session's deltas read in the same batch still
// arrive, however the agent's writes were read (here at once, so they
// share a queue run).
func TestTextDeltasPanicCostsItsRun(t *testing.T) {
	client := newDeltaClient()
	client.panicc = "boom"
	_, p := newPair(t, client, nil)
	lines := chunkLineJSON("s", "boom") + "\n" + chunkLineJSON("t", "other session") + "\n" +
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"x"}}}` + "\n" +
		chunkLineJSON("s", "after") + "\n"
	if _, err := io.WriteString(p.conn, lines); err != nil {
		t.Fatal(err)
	}
	got := client.wait(t, 3)
	want := []string{`delta t agent_message_chunk - "other session"`, "update s tool_call", `delta s agent_message_chunk - "after"`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("deliveries %q, want %q", got, want)
	}
}
