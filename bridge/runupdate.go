package bridge

import (
	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/internal/wire"
)

// runUpdate is one element of a run the connection delivers: a notification
// with its raw update, or a text delta.
type runUpdate = wire.Update[*acpclient.SessionNotification]

// deltaKind is the event kind of a text delta of the given update kind.
func deltaKind(updateKind string) Kind {
	switch updateKind {
	case acpclient.UpdateAgentThoughtChunk:
		return KindThinking
	case acpclient.UpdateUserMessageChunk:
		return KindUserText
	}
	return KindText
}
