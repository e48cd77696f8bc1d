package acpclient

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/wire"
)

// testRaw maps the notifications test helpers decoded to where their raw
// update is, for rawUpdate.
var testRaw sync.Map // *SessionNotification -> *rawSource

// rawUpdate is the update object of n as a wire.Receiver would get it; n
// came from one of the decoding helpers below.
func rawUpdate(n *SessionNotification) json.RawMessage {
	src, _ := testRaw.Load(n)
	s, _ := src.(*rawSource)
	if s == nil {
		s = &rawSource{}
	}
	return s.update(n)
}

// noteOf returns the notification of a decoded entry, remembering its raw
// source for rawUpdate.
func noteOf(in *inbound) *SessionNotification {
	if in == nil {
		return nil
	}
	testRaw.Store(in.update, &in.src)
	return in.update
}

// decodeChunkLine decodes line if it is a message-chunk notification the
// fast path takes (with a fresh decoder, as notifications), and returns
// nil otherwise.
func decodeChunkLine(line []byte) *SessionNotification {
	var d chunkDecoder
	return noteOf(d.decode(line, false))
}

// deltaNote is the notification a text delta stands for.
func deltaNote(d *wire.TextDelta) *SessionNotification {
	c := ContentChunk{Content: TextBlock(d.Text), Meta: d.Meta}
	if d.HasMessageID {
		id := d.MessageID
		c.MessageID = &id
	}
	u := chunkUpdate(d.Kind, c)
	if u == nil {
		u = &AgentMessageChunk{c}
	}
	return &SessionNotification{SessionID: d.SessionID, Update: u}
}

// splitRun hands a run to the old-style receiving methods of a test
// client: each stretch of notifications to ns, each stretch of deltas to
// ds, or to ns as notifications when ds is nil.
func splitRun(ctx context.Context, run []wire.Update[*SessionNotification], ns func(context.Context, []*SessionNotification), ds func(context.Context, []wire.TextDelta)) {
	for len(run) > 0 {
		n, lean := 1, run[0].IsDelta && ds != nil
		for n < len(run) && (run[n].IsDelta && ds != nil) == lean {
			n++
		}
		if lean {
			var d []wire.TextDelta
			for _, u := range run[:n] {
				d = append(d, u.Delta)
			}
			ds(ctx, d)
		} else {
			var b []*SessionNotification
			for i := range run[:n] {
				if run[i].IsDelta {
					b = append(b, deltaNote(&run[i].Delta))
				} else {
					b = append(b, run[i].Note)
				}
			}
			ns(ctx, b)
		}
		run = run[n:]
	}
}

// waitUntil polls cond every millisecond, failing t after 20 s.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}
