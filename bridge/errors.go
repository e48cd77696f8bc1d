package bridge

import "errors"

// Errors a caller can branch on that belong to no one concern; the others
// are declared beside their concern.
var (
	// ErrBusy: a turn is already running in the session.
	ErrBusy = errors.New("bridge: a turn is already running")
	// ErrClosed: the bridge or host was closed.
	ErrClosed = errors.New("bridge: closed")
	// ErrUnusable: the session could not be set up safely (for example its
	// directory grants could not be synchronised) and refuses prompts.
	ErrUnusable = errors.New("bridge: session unusable")
)
