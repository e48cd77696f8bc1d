package bridge

import (
	"context"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/checkpoint"
)

// The state of a Session: the config it opens with, its own fields and the state of each of its
// concerns, with the locks that guard them (their order is in the package
// doc), kept below the files that act on them: turn.go, control.go,
// authority_enforce.go, files.go, records.go, queue.go, changes.go and
// attach.go.

// SessionConfig describes a session to open.
type SessionConfig struct {
	// Key is the host's key for the session: it names the session in
	// events (Event.Key), in the journal and for resume, and it never
	// changes, whatever happens to the agent's own session id. Empty: a
	// new random key. When a record is saved under the key (in the Host's
	// journal or in Store), the session takes over its identity and, unless
	// ResumeID says otherwise, resumes its native session; an empty Cwd is
	// then the record's.
	Key string
	// Cwd is the session's absolute working directory on the agent's host.
	// A resumed session keeps the directory its record names: a Cwd that
	// differs from it is refused with ErrCwdChanged, naming both, unless
	// MoveCwd says to move the session there.
	Cwd string
	// MoveCwd moves a resumed session to Cwd when its record names another
	// directory: the agent is given Cwd and the record then names it. It
	// is the app's explicit "move it", never a default.
	MoveCwd bool
	// ExternalDirectories are further directories the agent may use: the
	// session's one grant list, sent to the agent on every attach and set
	// on Files that are a GrantSetter. Session.SetGrants changes it.
	ExternalDirectories []string
	// ResumeID is a saved native session id to load; when it cannot be
	// loaded a new session is created and the SessionReady event says why.
	ResumeID string
	// Model and Effort are applied after the session opens, when non-empty.
	Model  string
	Effort string
	// MCPServers are passed to the agent.
	MCPServers []acpclient.MCPServer
	// Policy is the host's execution policy for the session; it drives the
	// write gate of Files that are a ReadOnlySetter.
	Policy Policy
	// Files serves the agent's file reads and writes. Nil, for an agent
	// that runs on this machine (its transport is an
	// acpclient.ProgramTransport, as commands and local profile launches
	// are), is a root confined to Cwd (fsroot.NewLocal), which the session
	// closes when it closes. Otherwise (an agent over SSH or behind a
	// transport that does not say, or a Cwd that cannot be a root) nil
	// refuses the agent's file calls, and the first refusal is reported as
	// an error event saying why. The session owns the read-only state and the grants of
	// Files that implement ReadOnlySetter and GrantSetter (fsroot's roots
	// do).
	Files Files
	// Store, for apps without a Host journal, persists the session's Record
	// under its Key, so the session can be resumed after an app restart.
	// With a journal the record is kept there; a Store set as well gets it
	// too. Set Key to find the record again: a random key is new every run.
	Store Store
	// KeepJournaledReplay asks for the agent's own replay of the session's
	// history, delivered marked Replay, even when the Host's journal
	// already holds events of this session's key. By default the bridge
	// then resumes the session with session/resume, which replays
	// nothing, where the agent offers it, so a long session reopens at
	// once; the app's history is the journal's. An agent that can only
	// load replays anyway, and that replay is dropped
	// (SessionReady.ReplaySkipped counts it): an app that shows the
	// journal would show every turn twice. Replayed state (commands,
	// modes, config options, title, usage) is always delivered, and a
	// replay is always asked for when the journal holds nothing of the
	// key. With KeepJournaledReplay the bridge loads (session/load) where
	// the agent can.
	KeepJournaledReplay bool
	// QueueLimit caps the prompts waiting in the session's queue
	// (Enqueue); past it Enqueue fails with ErrQueueFull. 0 means 32.
	QueueLimit int
	// Checkpoints, when set, records the workspace (Cwd, unless it says
	// another) in a git directory of its own before and after every turn,
	// reports what each turn changed as a changes event, and lets the app
	// see a turn's diff and restore the state before a turn (TurnDiff,
	// Restore, RevertFile). git runs where the agent runs: on its SSH host
	// for an agent launched over SSH, else on this machine. The zero
	// Options are the defaults: the git directory in the host's cache
	// directory, named by the workspace and the session's Key (set Key to
	// find a session's checkpoints after a restart). See package
	// checkpoint for what a checkpoint holds and what a restore does.
	Checkpoints *checkpoint.Options
	// Worktree, when set, makes the session's cwd a new git worktree of
	// the repository at Cwd, on a new branch, removed when the session is
	// deleted (see Worktree).
	Worktree *Worktree
}

// Session is one agent session. Its methods are safe for concurrent use.
//
// A Session is its identity and the state the agent's updates change,
// under mu, plus one value per concern, each with the methods of that
// concern (the exported Session methods delegate to them): native
// (attaching, attach.go), turns (turn.go), ctl (control calls,
// control.go), auth (authority and the permission rules,
// authority_enforce.go), files (files.go), rec (its record, records.go),
// queue (queue.go) and ckpt (checkpoints, changes.go). Each concern's
// state is declared here. The lock order is in the package doc.
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
	rec    sessionRecords     // the session's record (records.go)
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

	// sent is closed once the turn's prompt has been written to the agent
	// (or the turn has ended without it): what is sent into the turn
	// waits for it, so it never overtakes the prompt.
	sent     chan struct{}
	sentOnce sync.Once

	finish     sync.Once
	stopReason string
	err        error
}

// markSent closes sent, once.
func (t *turnState) markSent() { t.sentOnce.Do(func() { close(t.sent) }) }

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

// updateFolds is the state of draft updates that patch or append to an
// earlier update by id, so that the bridge's events carry the whole result
// (Compaction.Summary, Event.Plans) as the stable kinds do. It is the session's, guarded
// by its mu; the zero value is ready.
type updateFolds struct {
	// summaries are the summaries of the compactions still running, by
	// compaction id.
	summaries map[string]*strings.Builder
	// plans are the agent's plans by id, in the order they came
	// (planfold.go).
	plans []acpclient.PlanContent
}

// sessionCheckpoints is a session's workspace custody: its checkpoint
// Store, opened at the first turn, the checkpoint before the running
// turn, and the watch of the workspace, which runs from the first turn to
// the session's close (changeslive.go). s is set once, when the session is
// made.
type sessionCheckpoints struct {
	s         *Session
	mu        sync.Mutex
	store     *checkpoint.Store
	before    map[uint64]string // checkpoint IDs before turns whose end is not recorded yet
	live      *liveChanges      // the running turn's live reports
	stopWatch func()            // ends the watch; nil when none runs
	watchDone bool              // the watch ended on its own (and said why)
	idle      Timer             // stops the watch of a session idle for watchIdle
	// prepared closes once the checkpoint prepare started (while the
	// agent starts) is done; nil when none was started. cancelPrepare
	// gives it up. Both are set before the session is shared.
	prepared      chan struct{}
	cancelPrepare context.CancelFunc
}

// sessionRecords is a session's record concern: building its Record,
// writing it to the Host's journal and the session's Store, and reading it
// back at open. mu orders the writes and guards last; s is set once, when
// the session is made.
type sessionRecords struct {
	s    *Session
	mu   sync.Mutex
	last *Record // the record last written
}

// liveChanges reports the files a running turn touches (changes events of
// Op "touch"), gathered for liveInterval on the Bridge's clock. It lives
// from the checkpoint before the turn to the turn's end (changeslive.go).
type liveChanges struct {
	s    *Session
	turn uint64

	mu      sync.Mutex
	pending map[string]string // path → status since the last report
	more    int               // files touched past maxLiveFiles since then
	stopped string            // why live reporting stopped, not reported yet
	timer   Timer
	ended   bool
}
