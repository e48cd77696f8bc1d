package acpclient

import (
	"encoding/json"
)

const methodSessionUpdate = "session/update"

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

// chunkLine is a whole session/update line carrying a message chunk, laid
// out so that one json.Unmarshal decodes it completely. The scanner in
// chunkscan.go decodes plain text chunks by hand; this is for the chunks it
// hands back (content blocks with fields other than type, text and _meta).
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

// decodeChunkInbound is decodeChunk returning the notification as the
// queue entry that carries it, or nil.
func decodeChunkInbound(line []byte, owned bool) *inbound {
	in, res := scanChunkInbound(line, owned)
	switch res {
	case chunkScanOK:
		return in
	case chunkScanFallback:
		return chunkFallback(line, owned)
	}
	return nil
}

// chunkFallback decodes a chunk line the scanner handed back, as the queue
// entry that carries it, or returns nil.
func chunkFallback(line []byte, owned bool) *inbound {
	return decodeChunkLineJSON(line, owned)
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
