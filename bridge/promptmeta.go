package bridge

import (
	"context"
	"encoding/json"
	"fmt"
)

// This file is a prompt's _meta: what an app sends along with a prompt
// for the agent's instrumentation, W3C trace context above all.

// promptMetaKey is the context key of WithPromptMeta.
type promptMetaKey struct{}

// WithPromptMeta returns a copy of ctx that carries meta, a JSON object,
// as the _meta of the prompts sent with it: Session.Prompt's, the one
// Session.Enqueue queues, and the one Session.Steer queues as its
// fallback. Its main use is the W3C
// trace context of the turn, the root keys "traceparent", "tracestate"
// and "baggage" by ACP's convention for propagating metadata, so the
// agent's spans join the app's trace; any other keys go as they are.
//
// A context, rather than a parameter, because trace context is data of
// the request that crosses process boundaries, which is what a context
// carries: an app that has its span in ctx adds the keys once where it
// prompts. A later WithPromptMeta replaces an earlier one.
//
// The meta is sent on every session/prompt of the turn (a retry after a
// sign-in or a backend failure included), carried by the turn_start event
// (Event.Raw) and so kept by the journal, and kept with a queued prompt
// (QueuedPrompt.Meta) in the session's record until its turn runs. Meta
// that is not a JSON object fails the prompt before anything is sent.
func WithPromptMeta(ctx context.Context, meta json.RawMessage) context.Context {
	return context.WithValue(ctx, promptMetaKey{}, meta)
}

// promptMeta is the meta WithPromptMeta put in ctx, nil for none.
func promptMeta(ctx context.Context) json.RawMessage {
	meta, _ := ctx.Value(promptMetaKey{}).(json.RawMessage)
	return meta
}

// checkPromptMeta refuses meta that cannot be a request's _meta: the
// schema wants an object.
func checkPromptMeta(meta json.RawMessage) error {
	if len(meta) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(meta, &obj); err != nil || obj == nil {
		return fmt.Errorf("the prompt's _meta must be a JSON object, not %.40s", meta)
	}
	return nil
}
