package journal

import (
	"context"
	"time"

	"github.com/acphost/acphost/bridge"
)

// The bridge.Store methods let a journal take the place of a FileStore
// (SessionConfig.Store), so resume records live beside the events. The
// Store interface has no context; they run without a deadline.

// Load returns the record saved under key (bridge.Store).
func (db *DB) Load(key string) (bridge.Record, bool, error) {
	return db.LoadSession(context.Background(), key)
}

// Save stores rec under key, stamping its UpdatedAt with the current time
// as FileStore does (bridge.Store); otherwise it is SaveSession.
func (db *DB) Save(key string, rec bridge.Record) error {
	rec.UpdatedAt = time.Now().UTC()
	return db.SaveSession(context.Background(), key, rec)
}

// Delete removes the record under key (bridge.Store). In a journal a
// session's record and its events go together: it is DeleteSession.
func (db *DB) Delete(key string) error {
	return db.DeleteSession(context.Background(), key)
}
