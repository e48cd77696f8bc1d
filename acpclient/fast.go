//go:build !plainwire

package acpclient

// fastWire says session/update lines are decoded by the fast path (the
// chunk scanner, shapes, lean text deltas, batched runs); built with the
// plainwire tag, every line is decoded with encoding/json instead, so the
// whole suite can run with the fast machinery unused.
const fastWire = true
