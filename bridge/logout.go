package bridge

import (
	"context"
	"fmt"
)

// Logout signs the bridge's agent out (the protocol's logout), for an app
// that offers "sign out" or switches accounts. It starts the agent if none
// runs, since the sign-in lives with the agent, and fails with an error
// wrapping acpclient.ErrUnsupported when the agent does not advertise
// auth.logout. It waits for a sign-in in progress and is never carried out
// during one.
//
// A signed-out agent is reported by an agent-wide notice event (Key ""),
// so every subscriber and the journal learn of it, not only the caller.
// The next call that needs a sign-in gets an auth_required event as
// usual. Logout does not touch what the bridge itself handed the agent:
// variables an env_var sign-in added stay in its launch environment.
func (b *Bridge) Logout(ctx context.Context) error {
	b.authMu.Lock()
	defer b.authMu.Unlock()
	conn, err := b.ensure(ctx)
	if err != nil {
		return fmt.Errorf("bridge %s: logout: %w", b.cfg.ID, err)
	}
	if err := conn.Logout(ctx); err != nil {
		return fmt.Errorf("bridge %s: %w", b.cfg.ID, err) // acpclient names the method
	}
	b.emit(Event{Kind: KindNotice, Text: logoutNotice})
	return nil
}

// logoutNotice is the text of the notice a Logout emits.
const logoutNotice = "signed out of the agent (logout)"
