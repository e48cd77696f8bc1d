package bridge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrAmbiguousSession: a native session id names more than one journaled
// session key (agents number their sessions alike, and a key keeps every
// id it had), so no one of them may be picked.
var ErrAmbiguousSession = errors.New("bridge: the id names several sessions")

// FindSession returns the record a user's id names in the journal: the
// session of that host key, else the one session whose native ids (current
// or earlier) include it. An id that no record has fails with
// ErrUnknownSession; one that several keys had fails with
// ErrAmbiguousSession, naming every matching key, so the user can choose
// one rather than get the latest silently.
func FindSession(ctx context.Context, j Journal, id string) (Record, error) {
	if j == nil {
		return Record{}, fmt.Errorf("bridge: finding session %q: no journal: %w", id, ErrUnknownSession)
	}
	if rec, ok, err := j.LoadSession(ctx, id); err != nil || ok {
		if err != nil {
			return Record{}, fmt.Errorf("bridge: finding session %q: %w", id, err)
		}
		return rec, nil
	}
	recs, err := j.Sessions(ctx)
	if err != nil {
		return Record{}, fmt.Errorf("bridge: finding session %q: %w", id, err)
	}
	var found []Record
	for _, r := range recs {
		if r.NativeSessionID == id || slices.ContainsFunc(r.NativeHistory, func(n NativeSession) bool { return n.ID == id }) {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 0:
		return Record{}, fmt.Errorf("bridge: no journaled session has key or agent session id %q: %w", id, ErrUnknownSession)
	case 1:
		return found[0], nil
	}
	keys := make([]string, len(found))
	for i, r := range found {
		keys[i] = r.Key
		if r.Bridge != "" {
			keys[i] += " (" + r.Bridge + ")"
		}
	}
	return Record{}, fmt.Errorf("bridge: agent session id %q was had by %d sessions: %s; name one by its key: %w",
		id, len(found), strings.Join(keys, ", "), ErrAmbiguousSession)
}
