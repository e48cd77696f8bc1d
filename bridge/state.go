package bridge

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acphost/acphost/acpclient"
)

// The state of a Session: its own fields and the state of each of its
// concerns, with the locks that guard them (their order is in the package
// doc), kept below the files that act on them: turn.go, control.go,
// authority_enforce.go, files.go, queue.go, attach.go (sessionNative's
// state is in native.go), store.go and changes.go (whose state stays with
// them).

// Session is one agent session. Its methods are safe for concurrent use.
//
// A Session is its identity and the state the agent's updates change,
// under mu, plus one value per concern, each with the methods of that
// concern (the exported Session methods delegate to them): native
// (attaching, attach.go), turns (turn.go), ctl (control calls,
// control.go), auth (authority and the permission rules,
// authority_enforce.go), files (files.go), rec (its record, store.go),
// queue (queue.go) and ckpt (checkpoints, changes.go). Each concern's
// state is declared here or, for native, rec and ckpt, beside it. The
// lock order is in the package doc.
type Session struct {
	b   *Bridge
	cfg SessionConfig
	key string // the host key (SessionConfig.Key); never changes
	id  string

	native sessionNative      // the native session and the process it is on
	turns  sessionTurns       // turns and the turn lock
	ctl    sessionControl     // turn admission and control calls
	auth   sessionAuthority   // the agent's authority
	files  sessionFiles       // the agent's file calls and their gate
	rec    sessionRecords     // the session's record
	queue  sessionQueue       // prompts waiting to run (queue.go)
	ckpt   sessionCheckpoints // workspace checkpoints (changes.go)

	closeMu sync.Mutex // one Close at a time

	// pending are the session's requests waiting on the user.
	pending pendingRequests

	mu        sync.Mutex
	policy    Policy
	grants    []string // the external directories; see SetGrants
	replaying bool
	turn      *turnState
	tools     *toolTracker
	usage     Usage
	folds     updateFolds // draft updates that patch earlier ones (folds.go)
	unusable  error
	// configOptions and models are the latest the agent reported, for
	// SetModel and the accessors.
	configOptions []acpclient.ConfigOption
	models        *acpclient.ModelState
	agentMode     string // the agent's current session mode; see AgentMode
	turnsEnded    int    // turns answered so far; updates outside a turn after one are late

	curTurn atomic.Uint64 // the running turn's number, 0 between turns

	// Guarded by mu: identity, replay and lifecycle (see sessions.go).
	natives       []NativeSession // every native id the key had, oldest first
	ready         *SessionReady   // the latest open or reattach
	title         string          // the latest title the agent reported
	created       time.Time
	skipReplay    bool // drop replayed history (see KeepJournaledReplay)
	replaySkipped int
	closing       bool // Close has begun: calls fail with ErrSessionClosed
	closed        bool // Close has finished: nothing is saved any more

	recorded *Record     // the record OpenSession resumed, to restore from (see restore.go); set before it is shared
	worktree *Worktree   // the session's own worktree (worktree.go), once made or recalled; set before it is shared
	fork     *ForkOrigin // the session it was forked from (see fork.go); set before it is shared
	seed     string      // a transcript fork's transcript, for its first prompt (see forkseed.go)
}

// sessionTurns is a session's turn concern: beginning a turn, finishing
// it when the agent answers, cancelling and expiring it, and the lock
// that keeps turns, compactions and reattaching from overlapping. Its
// running turn (Session.turn) and the turn counters stay under Session.mu,
// which the agent's updates take for them too; s is set once, when the
// session is made.
type sessionTurns struct {
	s *Session
	// mu is held for the whole of a turn, a compaction and a reattach;
	// another session's code takes it only through these methods.
	mu      ctxMutex
	started uint64 // turns started so far, the record's included; guarded by Session.mu
}

// turnState is what the bridge tracks while a turn runs.
type turnState struct {
	conn      *acpclient.Conn
	watchdog  *watchdog
	number    uint64 // the turn's number (Event.Turn)
	timedOut  bool   // guarded by Session.mu
	cancelled bool   // guarded by Session.mu
	// grace ends the turn if the agent does not answer a cancel; aborted
	// says it did. Guarded by Session.mu.
	grace   Timer
	aborted bool

	// Guarded by Session.mu: whether the turn produced output, and the
	// failure held back for a retry (see holdForRetry).
	emitted bool
	held    error
	retries turnRetries

	finish     sync.Once
	stopReason string
	err        error
}

// turnRetries counts what a turn has spent on repairs.
type turnRetries struct {
	auth      int  // sign-in rounds
	transient int  // resends before output
	recovered bool // the one continue-after-output of this user turn
}

// sessionControl orders what runs on a session. A turn is claimed (busy)
// from Prompt's start until just before its turn_end is emitted, so an app
// can prompt again from its turn_end handler; a compaction claims the
// session the same way, and a Prompt then waits for it instead of failing.
// Control calls (SetAgentMode, SetConfigOption, SetModel, SetEffort) are
// serialised among themselves and with reattaching through sem, and do not
// depend on whether a turn runs: the protocol allows them mid-turn.
//
// It is the session's configuration concern too: the agent mode, model,
// config options and effort the control calls set (the exported Session
// methods delegate here) and the agent's own reports of them. s is set
// once, when the session is made.
type sessionControl struct {
	s   *Session
	sem ctxMutex
	// Guarded by Session.mu.
	busy       bool          // a turn runs
	compacting chan struct{} // non-nil while a compaction runs; closed when it ends
	lastTurn   uint64        // the number of the last turn that ended
}

// sessionAuthority is a session's authority concern: its state, its
// enforcement (authority_enforce.go), the permission requests it answers
// and the rules it settles waiting ones by (asks.go, regovern.go), and
// the agent-reported modes and options it mirrors (mirror.go). Its state is guarded by Session.mu, except wg and
// settleMu; s is set once, when the session is made.
type sessionAuthority struct {
	s *Session
	// settleMu orders judging with reporting, so the last authority event
	// is the state Authority returns.
	settleMu   sync.Mutex
	reverts    int             // moves after the agent's own changes since the last prompt
	reports    uint64          // modes the agent reported itself, counted
	table      *ModeTable      // learned at attach (ModeTable.Learn); nil: the bridge's
	learnErr   error           // why learning failed
	consented  bool            // Session.GrantAutonomy was called
	opened     bool            // the session has opened: changes are enforced
	state      *AuthorityState // the state last reported
	refusal    error           // non-nil while blocked: what Prompt returns
	dirty      bool            // moves are due (the worker or the next prompt makes them)
	preferPlan bool            // the due moves include host Plan's plan mode
	cause      error           // why moving at attach failed, for the state reported next
	running    bool            // the worker runs
	again      bool            // run the worker once more
	ctx        context.Context // ends the worker when the session closes
	cancel     context.CancelFunc
	wg         sync.WaitGroup
}

// sessionFiles is a session's file concern: the agent's fs/* calls, the
// write gate and grants told to its Files, and the default root a local
// session makes (defaultFiles). s is set once, when the session is
// made; own and noRootWhy are set before the session is shared.
type sessionFiles struct {
	s              *Session
	own            io.Closer   // the default root the session made (see defaultFiles)
	noRootReported atomic.Bool // a file call refused for want of Files was reported
	noRootWhy      string      // why a local session has no default root
}

// sessionQueue is a session's prompt queue. mu guards the queue's state and
// is a leaf; changes are made and reported under emitMu, so queue events
// arrive in the order of the changes they report. One goroutine (drain) at
// a time runs the queued prompts; Close ends it. s is set once, when the
// session is made.
type sessionQueue struct {
	s      *Session
	emitMu sync.Mutex

	mu       sync.Mutex
	items    []QueuedPrompt
	inflight *QueuedPrompt // taken from items, its turn not yet begun
	paused   bool
	running  bool // drain runs
	rekick   bool // a turn ended while drain ran: look again before stopping
	heard    int  // turns whose end turnEnded has handled (see idle)
	closed   bool
	dropped  bool // closed and emptied: nothing goes back in
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}
