// Package wire is the seam between acpclient's fast decoding of
// session/update lines (the decoder itself is wire/scan) and the bridge,
// its one internal consumer: a run of updates whose elements are decoded
// notifications or lean text deltas, with the raw bytes the bridge keeps
// beside its events. acpclient's public Client sees none of it (it gets
// plain notifications through SessionUpdate); a Client that is a
// Receiver, which only code in this module can write, gets runs instead.
// It also carries the one signal the bridge needs from a call in flight:
// that a turn's prompt has been written (WithSent).
package wire

import (
	"context"
	"encoding/json"
)

// Receiver takes the session/update notifications of a connection in
// runs, in the agent's order: a run is consecutive pieces of one
// session's streamed messages (text deltas, message chunks), or one other
// notification. A panic in Updates costs its run alone (the connection
// logs it and goes on with the next). N is acpclient's
// notification type (a type parameter, as acpclient imports this package).
// The run (the slice) is the connection's to reuse once the call returns;
// the notifications, deltas' strings and raw bytes in it are the
// receiver's to keep.
type Receiver[N any] interface {
	Updates(ctx context.Context, run []Update[N])
}

// Update is one element of a run: a text delta (IsDelta) or a
// notification with the update object as the agent sent it (Raw; nil for
// a message chunk, whose bytes nobody keeps).
type Update[N any] struct {
	Note    N
	Raw     json.RawMessage
	Delta   TextDelta
	IsDelta bool
}

// TextDelta is one streamed piece of text: a session/update whose update
// is a message, thought or user chunk carrying a text block and nothing
// else but the chunk's own _meta (Meta).
type TextDelta struct {
	SessionID string
	// Kind is the update kind: agent_message_chunk, agent_thought_chunk
	// or user_message_chunk.
	Kind string
	// MessageID is the chunk's message id, or "" when it has none.
	MessageID    string
	HasMessageID bool
	Text         string
	Meta         json.RawMessage
}

// sentKey is the context key of WithSent.
type sentKey struct{}

// WithSent returns ctx carrying sent, which acpclient's PromptThen, given
// that context, calls once its request is written to the agent, before it
// waits for the answer. The bridge marks its turn's prompt as sent with
// it, so that what it sends into the turn (steered text) never reaches
// the agent before the prompt that started the turn.
func WithSent(ctx context.Context, sent func()) context.Context {
	return context.WithValue(ctx, sentKey{}, sent)
}

// Sent is the function WithSent put in ctx, or nil.
func Sent(ctx context.Context) func() {
	f, _ := ctx.Value(sentKey{}).(func())
	return f
}
