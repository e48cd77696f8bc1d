package bridge

import (
	"sync"

	"github.com/acphost/acphost/acpclient"
)

// The session's connection to the agent process: what attaching
// (attach.go) sets and every call to the agent reads.

// sessionNative is a session's attachment concern: the process it is
// attached to and attaching it (again, after a restart). mu orders grant
// changes against attaching, so the agent always ends up with the latest
// list, and guards conn; s is set once, when the session is made.
type sessionNative struct {
	s    *Session
	mu   sync.Mutex
	conn *acpclient.Conn // the process the session is attached to
	// servers are the session's MCP servers the agent of the attach in
	// progress takes (usableMCPServers).
	servers []acpclient.MCPServer
}

// markUnusable notes that the session cannot go on on its connection
// (err says why) and reports it as an error event.
func (sn *sessionNative) markUnusable(err error) {
	s := sn.s
	s.mu.Lock()
	s.unusable = err
	s.mu.Unlock()
	s.emit(Event{Kind: KindError, Err: err})
}

// isHistory reports whether a replayed event is transcript, which a
// journal already holds, rather than the session's current state, which
// the app needs whatever it has stored.
func isHistory(k Kind) bool {
	switch k {
	case KindCommands, KindAgentMode, KindConfig, KindSessionInfo, KindUsage:
		return false
	}
	return true
}
