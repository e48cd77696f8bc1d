package bridge

import (
	"context"

	"github.com/acphost/acphost/fsroot"
)

// What an app plugs in to serve the agent's file calls: Files, and the
// write gate and grant list a session drives in Files that have them
// (files.go is the session's side).

// Files serves a session's fs/read_text_file and fs/write_text_file from
// its workspace; fsroot's roots implement it. Paths are absolute; line is
// 1-based (0: from the start) and limit a line count (0: all). Files that
// also implement ReadOnlySetter and GrantSetter are driven by the session:
// such a value belongs to one session.
type Files interface {
	ReadTextFile(ctx context.Context, path string, line, limit int) (string, error)
	WriteTextFile(ctx context.Context, path, content string) error
}

// ReadOnlySetter is implemented by Files with a write gate of their own
// (fsroot's roots). The session sets it from its Policy when it opens and on
// every SetPolicy, with the reason ("Ask mode", "Plan mode", "read-only
// tool policy"), and leaves the refusing to it. Files without one are gated
// by the bridge itself, by the same rule.
type ReadOnlySetter interface {
	SetReadOnly(readOnly bool, reason string)
}

// GrantSetter is implemented by Files that confine the agent to its cwd
// and granted directories (fsroot's roots). The session's external
// directories are its complete grant list: set when the session opens
// (replacing any grants the Files were made with) and by Session.SetGrants.
type GrantSetter interface {
	SetGrants(ctx context.Context, dirs []string) error
}

// fsroot's roots are what the two seams are for.
var _ interface {
	Files
	ReadOnlySetter
	GrantSetter
} = fsroot.Root(nil)
