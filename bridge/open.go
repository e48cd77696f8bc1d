package bridge

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// This file opens a session: OpenSession and what it does in order, from
// the key's record to the first SessionReady.

// OpenSession opens a session on the agent, starting the agent if needed, in
// the order the protocol and our users need: load the saved session (or
// create one), send the directory grants, then the model, then the effort.
// The saved session is cfg.ResumeID or, without one, the native session of
// the record kept under cfg.Key (in the Host's journal, else in cfg.Store).
// A session resumed from its record keeps the record's Cwd (see
// SessionConfig.MoveCwd) and is set back to its model, effort, agent mode
// and config option values, under the authority rules (see restore.go: a
// refused value is an error event, not a failed open).
// A key can be open once per Host (ErrSessionOpen). Session.Ready and a
// SessionReady event report how it opened.
func (b *Bridge) OpenSession(ctx context.Context, cfg SessionConfig) (*Session, error) {
	return b.openSession(ctx, cfg, nil, "")
}

// openSession is OpenSession; with fork set it opens a fork of that
// origin (see Session.Fork) instead of resuming or creating a session,
// seed being a transcript fork's transcript.
func (b *Bridge) openSession(ctx context.Context, cfg SessionConfig, fork *ForkOrigin, seed string) (*Session, error) {
	if err := refuseLaunchFlag(b.lockPolicy(cfg.Policy), b.launchFlag().flag); err != nil {
		return nil, err // before the agent starts: the launch itself acts unasked
	}
	known := cfg.Key != "" // a new random key has no record to recall
	if !known {
		cfg.Key = newSessionKey()
	}
	s := &Session{b: b, cfg: cfg, key: cfg.Key, policy: b.lockPolicy(cfg.Policy), tools: newToolTracker(b.provider),
		grants: slices.Clone(cfg.ExternalDirectories), created: b.clock.Now(), fork: fork, seed: seed}
	if fork != nil {
		s.turns.started = fork.AfterTurn // the fork's turns follow the parent's
	}
	s.native.s, s.auth.s, s.rec.s, s.turns.s, s.ctl.s, s.files.s = s, s, s, s, s, s
	s.queue.s = s
	s.ckpt.s = s
	if !known && fork == nil {
		s.ckpt.prepare() // while the agent starts
	}
	opened := false
	defer func() {
		if !opened {
			s.ckpt.close()
		}
	}()
	if err := b.host.reserveKey(b, s); err != nil {
		return nil, err
	}
	defer func() {
		if !opened {
			b.forget(s)
		}
	}()
	conn, err := b.ensure(ctx)
	if err != nil {
		return nil, err
	}
	resumeID := cfg.ResumeID
	switch {
	case fork != nil && known:
		if err := s.rec.refuseTakenKey(ctx); err != nil {
			return nil, err
		}
	case known:
		if resumeID, err = s.rec.recall(ctx); err != nil {
			return nil, err
		}
		if err := s.rec.reseed(ctx); err != nil {
			return nil, err
		}
	}
	if err := s.addWorktree(ctx); err != nil {
		return nil, err
	}
	if s.worktree != nil && s.recorded == nil {
		defer func() {
			if !opened { // the worktree made for a session that did not open
				w := *s.worktree
				w.DeleteBranch = true
				_ = removeWorktree(context.WithoutCancel(ctx), b.hostRunner(), &w)
			}
		}()
	}
	s.files.defaultFiles()
	defer func() {
		if !opened {
			s.files.closeOwnFiles()
		}
	}()
	if g, ok := s.cfg.Files.(GrantSetter); ok {
		if err := g.SetGrants(ctx, s.grants); err != nil {
			return nil, fmt.Errorf("bridge %s: granting %q: %w", b.cfg.ID, s.grants, err)
		}
	}
	s.files.applyWriteGateLocked() // s is not shared yet
	ready, err := s.native.attach(ctx, conn, resumeID)
	if err != nil {
		return nil, err
	}
	opened = true
	s.native.emitReady(ready)
	s.rec.save()
	s.ctl.restoreRecorded(ctx, s.recorded)
	s.queue.announceRestored()
	return s, nil
}

// newSessionKey returns a random session key: 26 characters of base32,
// lower-cased so it reads well in URLs and file names.
func newSessionKey() string { return strings.ToLower(rand.Text()) }

// refuseTakenKey refuses a fork under a key that has a record already:
// the fork would take over another session's identity.
func (r *sessionRecords) refuseTakenKey(ctx context.Context) error {
	s := r.s
	_, ok, err := r.loadRecord(ctx)
	if err != nil {
		return err
	}
	if ok {
		return fmt.Errorf("bridge %s: fork of session %s under key %s: %w", s.b.cfg.ID, s.fork.Parent, s.key, errForkKeyTaken)
	}
	return nil
}

// errForkKeyTaken refuses a fork under a key that names a session.
var errForkKeyTaken = errors.New("the key already names a session")
