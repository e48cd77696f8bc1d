package bridge

import (
	"context"
	"errors"
)

// RestoreCheckpoint brings the workspace back to a checkpoint the session
// recorded, named by its ID as a changes event gives it. Its use is the
// undo of a restore: the From of a restore's event is the workspace just
// before that restore, so RestoreCheckpoint(From) undoes it, and the From
// of that undo's own event redoes it. The IDs live in the journaled
// events and the checkpoints in the session's git directory, so an undo
// works after an app restart too, for a session opened again under its
// Key. The To of a turn's event (the end of that turn) is a checkpoint
// as well.
//
// The rules are Restore's: the files that differ between the checkpoint
// and the last one are set back, after the workspace is recorded; a file
// changed since the last checkpoint is a *checkpoint.ConflictError and
// nothing changes, unless force; ErrBusy while a turn runs. Restoring a
// restore's From after later turns also undoes what they changed (Restore
// a single turn for less). A changes event, Op "restore" with Restored 0,
// reports it.
func (s *Session) RestoreCheckpoint(ctx context.Context, id string, force bool) error {
	if id == "" {
		return errors.New("bridge: restore: no checkpoint ID")
	}
	return s.ckpt.restore(ctx, 0, id, "", force)
}
