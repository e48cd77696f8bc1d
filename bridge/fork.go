package bridge

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/acphost/acphost/acpclient"
)

// Forking a session: a new session, under a key of its own, that goes on
// from the current one through the agent's session/fork. The agent keeps
// the context; the host keeps the link (ForkOrigin in the Record, the
// session event and the session list) and shows the fork's history as the
// parent's up to the fork, then its own (see History).
//
// Rewinding is a fork from an earlier point: the state before turn N, to
// send an edited message N again. It is done natively only where the agent
// can do it itself; no version or draft of the protocol has a call for it,
// so today Fork refuses it with acpclient.ErrUnsupported. Nothing replays
// the earlier turns into a fresh session behind the app's back: a
// transcript fork (forkseed.go) is a separate choice the app makes
// explicitly, and it is marked as one wherever the fork shows.

// ForkOptions says how to fork a session (Session.Fork). The zero value
// forks at the end of the session under a new random key.
type ForkOptions struct {
	// Key is the new session's host key; empty: a new random key. A key
	// that already names a session is refused.
	Key string
	// BeforeTurn, when set, rewinds: the fork is to hold the parent's turns
	// before this one, so that turn's message can be sent again, edited.
	// The turn after the last one (Session's turn count + 1) is the end of
	// the session, a plain fork; an earlier one needs an agent that can fork
	// at a given point, and is refused with acpclient.ErrUnsupported.
	BeforeTurn uint64
	// Files serves the fork's file calls, as SessionConfig.Files; the
	// parent's are its own and are not shared. Nil: the default for the
	// agent's transport.
	Files Files
	// Store, as SessionConfig.Store, for apps without a Host journal.
	Store Store
	// Worktree, when set, gives the fork a new git worktree of its own (see
	// SessionConfig.Worktree), added from the parent's directory: Base ""
	// is the parent's HEAD, refused while the parent has uncommitted
	// changes. Nil: the fork works in the parent's directory, its worktree
	// if it has one (which the fork never removes).
	Worktree *Worktree
	// Transcript is the app's explicit choice of a fallback where the
	// agent cannot fork (at BeforeTurn, or at all): a new session
	// (session/new) whose first prompt carries, ahead of the app's
	// content, a transcript of the parent's turns before the fork point,
	// read from the Host's journal (required) and marked as a transcript
	// (its turn_start shows it). The agent gets the conversation as text
	// only, not its tool results or its own state; ForkOrigin.Transcript
	// says so in the record, the session event and the session list. The
	// agent's own fork is used wherever it can make one. Fork waits until
	// the parent's events up to the point have reached the Host's
	// subscribers, so it must not be called from the goroutine that reads
	// Host.Events.
	Transcript bool
}

// CanFork reports whether Fork with BeforeTurn beforeTurn (0: at the end)
// can be tried, before the app offers it: nil when it can, else an error
// wrapping acpclient.ErrUnsupported that says why (the agent does not
// advertise session/fork, or the point is before the end of the session
// and the agent cannot fork there). A UI calls it with 0 for a "fork"
// action and with a past message's turn for "edit and resend"; where the
// agent cannot, the app may offer a transcript fork instead
// (ForkOptions.Transcript), saying it is one. A turn past the next one is
// no point of the session (an error that is not ErrUnsupported); a closed
// session gives ErrSessionClosed. It reads the capabilities of the agent's
// last start and sends nothing.
func (s *Session) CanFork(beforeTurn uint64) error {
	if err := s.closedErr(); err != nil {
		return err
	}
	s.mu.Lock()
	started := s.turns.started
	s.mu.Unlock()
	if beforeTurn > started+1 {
		return fmt.Errorf("bridge %s: fork of session %s before turn %d: the session has %d turns", s.b.cfg.ID, s.key, beforeTurn, started)
	}
	s.b.mu.Lock()
	agent := s.b.agent
	s.b.mu.Unlock()
	if agent == nil || agent.AgentCapabilities.SessionCapabilities.Fork == nil {
		return fmt.Errorf("bridge %s: fork of session %s: the agent does not advertise session/fork: %w", s.b.cfg.ID, s.key, acpclient.ErrUnsupported)
	}
	if beforeTurn != 0 && beforeTurn <= started {
		return fmt.Errorf("bridge %s: rewinding session %s to before turn %d: the agent can fork only at the end of a session (turn %d), and ACP has no call to fork at an earlier point: %w",
			s.b.cfg.ID, s.key, beforeTurn, started, acpclient.ErrUnsupported)
	}
	return nil
}

// Fork makes a new session, under a new host key, that goes on from this
// one: the agent forks its native session (session/fork) and the new
// session, open on the same bridge in the same directory with the same
// grants, MCP servers and policy, holds the conversation so far. Its
// session event, Record and session list entry carry its ForkOrigin; its
// turns are numbered on from the parent's; History and Host.Subscribe show
// its history as the parent's up to the fork, then its own.
// The parent is unchanged and stays open. A parent with checkpoints
// (SessionConfig.Checkpoints) gives the fork its options, so the fork's
// turns are recorded too, in a git directory of the fork's own: an
// explicit Options.Dir or Name gets "-KEY" appended, KEY the fork's key,
// so the fork opened again with its parent's options finds it.
//
// A fork is made between turns: while a turn runs (and so while a
// permission request or another question of that turn waits for the user,
// which belongs to the parent's turn) Fork returns ErrTurnRunning and the
// turn and its requests go on untouched; a Prompt made while Fork runs
// waits for it. CanFork says beforehand whether the agent can fork, and
// where (see ForkOptions.BeforeTurn). Where it cannot, Fork fails with
// acpclient.ErrUnsupported unless the app chose ForkOptions.Transcript.
func (s *Session) Fork(ctx context.Context, opts ForkOptions) (*Session, error) {
	seeded := false
	if err := s.CanFork(opts.BeforeTurn); err != nil {
		if !opts.Transcript || !errors.Is(err, acpclient.ErrUnsupported) {
			return nil, err
		}
		seeded = true // the app's explicit choice; see ForkOptions.Transcript
	}
	release, err := s.ctl.holdPrompts(ctx, func() error {
		return fmt.Errorf("bridge %s: fork of session %s: %w", s.b.cfg.ID, s.key, ErrTurnRunning)
	})
	if err != nil {
		return nil, err
	}
	defer release()
	s.mu.Lock()
	after := s.turns.started
	s.mu.Unlock()
	if opts.BeforeTurn != 0 {
		after = opts.BeforeTurn - 1
	}
	var seed string
	if seeded {
		var err error
		if seed, err = s.rec.transcriptOf(ctx, after); err != nil {
			return nil, fmt.Errorf("bridge %s: transcript fork of session %s: %w", s.b.cfg.ID, s.key, err)
		}
	}
	return withControl(s, ctx, func(*acpclient.Conn) (*Session, error) {
		s.mu.Lock()
		origin := &ForkOrigin{Parent: s.key, ParentSession: s.id, AfterTurn: after, Transcript: seeded}
		cfg := SessionConfig{Key: opts.Key, Cwd: s.cfg.Cwd, ExternalDirectories: slices.Clone(s.grants), Model: s.cfg.Model,
			Effort: s.cfg.Effort, MCPServers: s.cfg.MCPServers, Policy: s.policy, Files: opts.Files, Store: opts.Store,
			Checkpoints: s.forkCheckpoints(opts.Worktree != nil), Worktree: opts.Worktree}
		s.mu.Unlock()
		return s.b.openSession(ctx, cfg, origin, seed)
	})
}

// forking reports whether attaching is to fork the session's origin: a
// fork not attached yet. Attached once, it resumes its own native session.
func (sn *sessionNative) forking() bool {
	s := sn.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fork != nil && !s.fork.Transcript && len(s.natives) == 0
}

// newNative creates the session's native session: a fork of its origin's
// (session/fork) when it is forking, else a new one (session/new).
func (sn *sessionNative) newNative(ctx context.Context, conn *acpclient.Conn, req *acpclient.NewSessionRequest) (*acpclient.NewSessionResponse, error) {
	s := sn.s
	if !sn.forking() {
		return conn.NewSession(ctx, req)
	}
	resp, err := conn.ForkSession(ctx, &acpclient.ForkSessionRequest{SessionID: s.fork.ParentSession, Cwd: req.Cwd,
		MCPServers: req.MCPServers, AdditionalDirectories: req.AdditionalDirectories})
	if err != nil {
		return nil, fmt.Errorf("forking session %s: %w", s.fork.Parent, err)
	}
	return resp, nil
}
