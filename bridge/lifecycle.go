package bridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/acphost/acphost/acpclient"
)

// This file is the one way the bridge replaces its agent process: a sign-in
// that needs new environment variables or a login command, and Relaunch
// with new launch options, both go through respawn.

// respawn ends the running process and starts a new one on the transport
// next returns for the current one; sessions attach to it when next used.
// next runs under the start lock, so no other start interleaves. stopped,
// if set, runs once the old process is gone and before the new one starts.
// A closed bridge is not restarted (ErrClosed).
func (b *Bridge) respawn(ctx context.Context, next func(acpclient.Transport) (acpclient.Transport, error), stopped func()) (*acpclient.Conn, error) {
	b.startMu.Lock()
	defer b.startMu.Unlock()
	t, err := next(b.cfg.Transport)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	old, closed := b.conn, b.closed
	b.conn = nil
	b.cfg.Transport = t
	b.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if old != nil {
		old.Close()
		<-old.Done()
	}
	if stopped != nil {
		stopped()
	}
	return b.start(ctx)
}

// Relaunch restarts the agent of a profile bridge with changed launch
// options (an agent mode, a vendor's approval policy) and resumes its
// sessions natively on the new process, under the same session ids. It is
// refused with ErrBusy while any session runs a turn, so authority never
// changes under a running turn. Policies are re-applied, so a launch that
// locks the execution mode takes effect at once.
func (b *Bridge) Relaunch(ctx context.Context, change func(*LaunchOptions)) error {
	l := b.Launch()
	if l == nil {
		return fmt.Errorf("bridge %s: relaunch: not started from a profile", b.cfg.ID)
	}
	sessions, unlock, ok := b.lockIdle()
	if !ok {
		return fmt.Errorf("bridge %s: relaunch: %w", b.cfg.ID, ErrBusy)
	}
	opts := l.Options()
	change(&opts)
	if err := b.refuseRelaunchFlag(opts, sessions); err != nil {
		unlock()
		return err
	}
	tr, path, res, err := l.Profile.transport(ctx, opts)
	if err != nil {
		unlock()
		return err
	}
	next := func(acpclient.Transport) (acpclient.Transport, error) {
		l.set(opts, res)
		return &profileTransport{launch: l, inner: tr, path: path}, nil
	}
	_, err = b.respawn(ctx, next, func() {
		unlock()
		b.running.Wait() // the old process's exit is reported before the new one starts
	})
	if err != nil {
		unlock() // respawn failed before the old process stopped
		return fmt.Errorf("bridge %s: relaunch: %w", b.cfg.ID, err)
	}
	return b.resumeAll(ctx, sessions)
}

// lockIdle takes the turn lock of every session, or of none when one runs a
// turn. unlock releases them; calling it again does nothing.
func (b *Bridge) lockIdle() (sessions []*Session, unlock func(), ok bool) {
	b.mu.Lock()
	sessions = make([]*Session, 0, len(b.sessions))
	for _, s := range b.sessions {
		sessions = append(sessions, s)
	}
	b.mu.Unlock()
	var locked []*Session
	unlock = func() {
		for _, s := range locked {
			s.turns.release()
		}
		locked = nil
	}
	for _, s := range sessions {
		if !s.turns.tryHold() {
			unlock()
			return nil, nil, false
		}
		locked = append(locked, s)
	}
	return sessions, unlock, true
}

// resumeAll re-applies the sessions' policies and resumes them natively on
// the new process; a session whose prompt got in first resumes itself.
func (b *Bridge) resumeAll(ctx context.Context, sessions []*Session) error {
	var errs []error
	for _, s := range sessions {
		s.SetPolicy(s.Policy())
		if !s.turns.tryHold() {
			continue
		}
		_, err := s.native.reattach(ctx)
		s.turns.release()
		if err != nil {
			errs = append(errs, fmt.Errorf("session %s: %w", s.id, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("bridge %s: relaunch: resuming sessions: %w", b.cfg.ID, errors.Join(errs...))
	}
	return nil
}
