package scan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// chunkLineJSON is an agent message chunk line as an encoder writes it.
func chunkLineJSON(session, text string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":%q}}}}`, session, text)
}

// benchLines returns n typical streamed-text notifications, one per line.
func benchLines(n int) [][]byte {
	words := []string{"Reading ", "the file ", "now; ", "it defines ", "`func main()` ", "and ", "two helpers.\n"}
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_01JD8X4","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":%q},"messageId":"msg_%d"}}}`+"\n", words[i%len(words)], i/50))
	}
	return out
}

// refDecode decodes line with encoding/json as acpclient's general path
// does (the envelope, then the params, then the update and its content
// block), keeping what a Chunk holds. ok is false when the general path
// would not deliver the line as a message chunk of a known content type.
func refDecode(line []byte) (c Chunk, ok bool) {
	var env struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(line, &env) != nil || env.JSONRPC != nil && *env.JSONRPC != "2.0" ||
		env.Method == nil || *env.Method != methodSessionUpdate || env.ID != nil || env.Result != nil || env.Error != nil {
		return c, false
	}
	var p struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
		Meta      json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(env.Params, &p) != nil {
		return c, false
	}
	var u struct {
		SessionUpdate string `json:"sessionUpdate"`
		Content       struct {
			Type string          `json:"type"`
			Text string          `json:"text"`
			Meta json.RawMessage `json:"_meta"`
		} `json:"content"`
		MessageID *string         `json:"messageId"`
		Meta      json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(p.Update, &u) != nil {
		return c, false
	}
	switch u.SessionUpdate {
	case updateAgentMessageChunk, updateAgentThoughtChunk, updateUserMessageChunk:
	default:
		return c, false
	}
	switch u.Content.Type {
	case contentText, contentImage, contentAudio, contentResourceLink, contentResource:
	default:
		return c, false
	}
	c = Chunk{ContentType: u.Content.Type, ContentMeta: u.Content.Meta, ParamsMeta: p.Meta}
	c.SessionID, c.Kind, c.Text, c.Meta = p.SessionID, u.SessionUpdate, u.Content.Text, u.Meta
	if u.MessageID != nil {
		c.MessageID, c.HasMessageID = *u.MessageID, true
	}
	return c, true
}

// sameChunk fails t unless got and want are the same chunk.
func sameChunk(t *testing.T, line []byte, got, want *Chunk) {
	t.Helper()
	raw := func(a, b json.RawMessage) bool { return bytes.Equal(a, b) && (a == nil) == (b == nil) }
	if got.SessionID != want.SessionID || got.Kind != want.Kind || got.Text != want.Text ||
		got.MessageID != want.MessageID || got.HasMessageID != want.HasMessageID || got.ContentType != want.ContentType ||
		!raw(got.Meta, want.Meta) || !raw(got.ContentMeta, want.ContentMeta) || !raw(got.ParamsMeta, want.ParamsMeta) {
		t.Fatalf("line %q:\ngot  %+v\nwant %+v", line, *got, *want)
	}
}
