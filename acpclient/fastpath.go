package acpclient

import (
	"bytes"
	"encoding/json"
)

const methodSessionUpdate = "session/update"

// chunkLine is a whole session/update line carrying a message chunk, laid
// out so that one json.Unmarshal decodes it completely. Streamed text is
// most of what an agent sends; decoding the envelope, then the params, then
// the update separately would scan each byte three times.
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

var (
	methodNeedle = []byte(`"session/update"`)
	kindNeedle   = []byte(`"sessionUpdate":"`)
)

// decodeChunkLine decodes line if it is a plain message-chunk notification,
// and returns nil otherwise (the general path then handles it). The byte
// checks only pick the shape to try; the decoded fields decide.
func decodeChunkLine(line []byte) *SessionNotification {
	if !bytes.Contains(line, methodNeedle) {
		return nil
	}
	i := bytes.Index(line, kindNeedle)
	if i < 0 {
		return nil
	}
	rest := line[i+len(kindNeedle):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return nil
	}
	kind := rest[:j]
	var make func(ContentChunk) SessionUpdate
	switch string(kind) {
	case UpdateAgentMessageChunk:
		make = func(c ContentChunk) SessionUpdate { return &AgentMessageChunk{c} }
	case UpdateAgentThoughtChunk:
		make = func(c ContentChunk) SessionUpdate { return &AgentThoughtChunk{c} }
	case UpdateUserMessageChunk:
		make = func(c ContentChunk) SessionUpdate { return &UserMessageChunk{c} }
	default:
		return nil
	}
	var m chunkLine
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	u := &m.Params.Update
	if m.JSONRPC != "2.0" || m.ID != nil || m.Method != methodSessionUpdate || m.Result != nil ||
		m.Error != nil || u.SessionUpdate != string(kind) || !knownContentType(u.Content.Type) {
		return nil
	}
	return &SessionNotification{
		SessionID: m.Params.SessionID,
		Meta:      m.Params.Meta,
		Update:    make(ContentChunk{Content: ContentBlock(u.Content), MessageID: u.MessageID, Meta: u.Meta}),
		rawLine:   append([]byte(nil), line...),
	}
}
