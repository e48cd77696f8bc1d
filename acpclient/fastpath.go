package acpclient

import (
	"encoding/json"

	"github.com/acphost/acphost/internal/wire/scan"
)

const methodSessionUpdate = "session/update"

// chunkDecoder is the read goroutine's fast decoder of message-chunk
// lines (internal/wire/scan) and where the queue entries of its text
// deltas are kept for reuse (textdelta.go).
type chunkDecoder struct {
	scan scan.Decoder
	// deltas is shared with the dispatch goroutine, which gives entries
	// back. It is made with the first delta, so an idle connection does
	// not hold it; the dispatcher reads it only for entries queued after
	// that, which the queue's lock orders after the write.
	deltas *scan.Pool[deltaEntry]
}

// fastLine decodes line on the fast path when it is a session/update one
// of the fast decoders takes, as its queue entry, or returns nil: the
// general path then decodes it. Built with plainwire, it takes none.
func (c *Conn) fastLine(line []byte) *inbound {
	if !fastWire {
		return nil
	}
	owned := c.lines.lineOwned()
	if m := c.chunks.decode(line, owned); m != nil {
		return m
	}
	return decodeToolLine(line, owned)
}

// decode decodes a message-chunk line as its queue entry: a text delta
// when the Client takes them and the line is one, else a notification.
// It returns nil for a line the general path must decode.
func (d *chunkDecoder) decode(line []byte, owned bool) *inbound {
	var c scan.Chunk
	switch d.scan.Decode(line, owned, &c) {
	case scan.OK:
		if c.Lean {
			return d.newDelta(&c.TextDelta, len(line))
		}
		return newChunkEntry(&c, len(line))
	case scan.Fallback:
		return decodeChunkLineJSON(line, owned)
	}
	return nil
}

// chunkBox is everything a decoded chunk line needs, in one allocation:
// the queue entry, the notification, its update and the message id the
// update points to. Allocating them apart cost three allocations per
// streamed chunk where one does. The three chunk kinds are the same
// struct (ContentChunk), so one box holds any of them.
type chunkBox struct {
	in inbound
	n  SessionNotification
	u  AgentMessageChunk // or, converted, the thought or user chunk
	id string
}

// newChunkEntry returns the queue entry of the notification c, decoded
// from a line of n bytes. Its strings refer into the bytes the decoder
// kept, so the line counts once (queuedSize).
func newChunkEntry(c *scan.Chunk, n int) *inbound {
	b := new(chunkBox)
	var u SessionUpdate = &b.u
	switch c.Kind {
	case UpdateAgentThoughtChunk:
		u = (*AgentThoughtChunk)(&b.u)
	case UpdateUserMessageChunk:
		u = (*UserMessageChunk)(&b.u)
	}
	b.u.Content = ContentBlock{Type: c.ContentType, Text: c.Text, Meta: c.ContentMeta}
	b.u.Meta = c.Meta
	if c.HasMessageID {
		b.id, b.u.MessageID = c.MessageID, &b.id
	}
	b.n = SessionNotification{SessionID: c.SessionID, Update: u, Meta: c.ParamsMeta}
	b.in = inbound{method: methodSessionUpdate, update: &b.n, size: queuedSize(n, false)}
	return &b.in
}

// chunkLine is a whole session/update line carrying a message chunk, laid
// out so that one json.Unmarshal decodes it completely: the lines the
// scanner hands back (content blocks with fields other than type, text and
// _meta).
type chunkLine struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			SessionUpdate string             `json:"sessionUpdate"`
			Content       contentBlockFields `json:"content"`
			MessageID     *string            `json:"messageId"`
			Meta          json.RawMessage    `json:"_meta"`
		} `json:"update"`
		Meta json.RawMessage `json:"_meta"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// decodeChunkLineJSON decodes a chunk line with encoding/json, as the
// queue entry that carries it, or returns nil.
func decodeChunkLineJSON(line []byte, owned bool) *inbound {
	var m chunkLine
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	u := &m.Params.Update
	if m.JSONRPC != "2.0" || m.ID != nil || m.Method != methodSessionUpdate || m.Result != nil ||
		m.Error != nil || !knownContentType(u.Content.Type) {
		return nil
	}
	update := chunkUpdate(u.SessionUpdate, ContentChunk{Content: ContentBlock(u.Content), MessageID: u.MessageID, Meta: u.Meta})
	if update == nil {
		return nil
	}
	n := &SessionNotification{SessionID: m.Params.SessionID, Meta: m.Params.Meta, Update: update}
	return &inbound{method: methodSessionUpdate, update: n, size: queuedSize(len(line), true)}
}

// chunkUpdate returns the message-chunk update of the given kind holding
// c, or nil for a kind that is not a message chunk.
func chunkUpdate(kind string, c ContentChunk) SessionUpdate {
	switch kind {
	case UpdateAgentMessageChunk:
		return &AgentMessageChunk{c}
	case UpdateAgentThoughtChunk:
		return &AgentThoughtChunk{c}
	case UpdateUserMessageChunk:
		return &UserMessageChunk{c}
	}
	return nil
}
