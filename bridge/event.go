package bridge

import (
	"encoding/json"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge/terminal"
)

// Kind says what an Event reports. Its values are stable strings, suitable
// for logs and for JSON output.
type Kind string

// Event kinds.
const (
	KindText        Kind = "text"         // a piece of the agent's reply (Text)
	KindThinking    Kind = "thinking"     // a piece of its reasoning (Text)
	KindUserText    Kind = "user_text"    // a piece of a user message, from load replay, or text steered into a turn (Text, Steer)
	KindToolStart   Kind = "tool_start"   // a new tool call (Tool)
	KindToolUpdate  Kind = "tool_update"  // a tool call changed (Tool)
	KindToolEnd     Kind = "tool_end"     // a tool call completed, failed or was cancelled (Tool)
	KindPermission  Kind = "permission"   // the agent asks to run a tool; answer Permission
	KindPlan        Kind = "plan"         // the plan or todo list, replaced whole (Plan)
	KindUsage       Kind = "usage"        // context window fill and cost (Usage)
	KindCompaction  Kind = "compaction"   // context compaction progress (Compaction)
	KindAgentMode   Kind = "agent_mode"   // the agent's own session mode changed (AgentMode)
	KindConfig      Kind = "config"       // the session's config options changed (ConfigOptions)
	KindModel       Kind = "model"        // the legacy model selection changed (Models)
	KindCommands    Kind = "commands"     // the slash commands changed (Commands)
	KindSessionInfo Kind = "session_info" // title or update time changed (SessionInfo)
	KindSession     Kind = "session"      // a session is ready (SessionReady)
	KindTurnStart   Kind = "turn_start"   // a prompt was sent (Text holds it, Raw its _meta)
	KindTurnEnd     Kind = "turn_end"     // the turn ended (StopReason, Err when it failed)
	KindError       Kind = "error"        // something failed (Err)
	KindExited      Kind = "exited"       // the agent process ended (Err says why)
	KindExt         Kind = "ext"          // an update or vendor notification without a kind of its own (Method, Raw)
	KindElicitation Kind = "elicitation"  // the agent asks the user for input; answer Elicitation
	// KindElicitationComplete: the agent reports that the out-of-band
	// step of a url elicitation (Elicitation, the request it asked) is
	// done, so a UI closes what it shows for it. A request still waiting
	// is first settled as accepted, by the host.
	KindElicitationComplete Kind = "elicitation_complete"
	// KindAuthRequired: the agent needs the user to sign in; answer Auth
	// with one of its methods and the bridge retries what failed.
	KindAuthRequired Kind = "auth_required"
	// KindTodos: the agent's task list, rebuilt from its task tools and
	// replaced whole (Todos, and Plan for hosts that show plans).
	KindTodos Kind = "todos"
	// KindNotice: a message for the user that is neither agent output nor
	// an error, such as a recovered backend failure (Text), or the agent's
	// own notice (Notice, with its title in Text).
	KindNotice Kind = "notice"
	// KindDecision: a request that waited on the user (permission,
	// question, sign-in) was answered or abandoned, by the app, by the
	// policy on its own, or by the host (Decision says which, and why).
	// Every request gets one, so the journal is an audit trail.
	KindDecision Kind = "decision"
	// KindSessionClosed: the session was closed (Session.Close); its
	// record stays in the journal, so it can be resumed by its key.
	KindSessionClosed Kind = "session_closed"
	// KindTerminal: output of a command that runs for a tool call, or its
	// exit (Terminal), whichever way it runs: a terminal the bridge serves
	// (terminal/create), or the agent's own command reported in tool call
	// _meta or terminal session updates.
	KindTerminal Kind = "terminal"
	// KindAuthority: whether the host can interpose on what the agent
	// does changed (Authority); the first comes when the session opens.
	KindAuthority Kind = "authority"
	// KindQueue: the session's prompt queue changed (Queue says how, and
	// lists the queue after the change).
	KindQueue Kind = "queue"
	// KindChanges: what a turn, an fs/write_text_file or a restore
	// changed in the session's workspace (Changes), with
	// SessionConfig.Checkpoints set.
	KindChanges Kind = "changes"
)

// Event is everything a host shows about its agents, in one type. Events of
// one Host arrive on one stream in the order they happened; Seq numbers the
// events of one session without gaps. An Event has one JSON form, which
// json.Marshal writes and json.Unmarshal reads back (see "Event JSON" in
// the package doc).
type Event struct {
	// Pos is the event's position in its Host's stream: it grows by one
	// with every event of every agent, and continues across app restarts
	// when the Host has a Journal. Subscribers resume after a Pos.
	Pos uint64 `json:"pos"`
	// Bridge is the id of the Bridge the event comes from (its Config.ID;
	// Host.Bridge finds it).
	Bridge string `json:"bridge"`
	// Key is the host's key of the session (SessionConfig.Key): it never
	// changes, while the agent's own id (Session) may, when a crashed agent
	// cannot resume. "" for agent-wide events.
	Key string `json:"key,omitempty"`
	// Session is the agent's session id ("" for agent-wide events).
	Session string `json:"session,omitempty"`
	// Seq numbers the events of one session key from 1, without gaps, also
	// across native id changes and, with a Journal, app restarts. Agent-wide
	// events are numbered per bridge.
	Seq uint64 `json:"seq"`
	// Turn is the number of the session's turn the event belongs to (1 for
	// its first prompt), or 0 for events outside any turn.
	Turn uint64 `json:"turn,omitempty"`
	// Kind says which of the fields below apply.
	Kind Kind `json:"kind"`
	// Time is when the bridge received or produced the event.
	Time time.Time `json:"time"`
	// Replay marks events replayed by session/load: history, not new output.
	Replay bool `json:"replay,omitempty"`
	// Late marks updates that arrived after a turn's answer while no new
	// turn runs (agents do send usage and tool updates then). They are real,
	// just outside a turn.
	Late bool `json:"late,omitempty"`

	Text      string `json:"text,omitempty"`
	MessageID string `json:"messageId,omitempty"`
	// Content is a piece of a message that is not text (an image, audio,
	// a resource or a link to one), in a text, thinking or user_text event
	// whose Text is then empty. Its data (base64 image or audio, embedded
	// resource text or blob) is kept up to 1 MiB; larger data is left out
	// and ContentDropped says how many bytes were.
	Content        *acpclient.ContentBlock      `json:"content,omitempty"`
	ContentDropped int                          `json:"contentDropped,omitempty"`
	Tool           *ToolCall                    `json:"tool,omitempty"`
	Permission     *PermissionRequest           `json:"permission,omitempty"`
	Elicitation    *ElicitationRequest          `json:"elicitation,omitempty"`
	Plan           []acpclient.PlanEntry        `json:"plan,omitempty"`
	Usage          *Usage                       `json:"usage,omitempty"`
	Compaction     *Compaction                  `json:"compaction,omitempty"`
	AgentMode      string                       `json:"agentMode,omitempty"`
	ConfigOptions  []acpclient.ConfigOption     `json:"configOptions,omitempty"`
	Models         *acpclient.ModelState        `json:"models,omitempty"`
	Commands       []acpclient.AvailableCommand `json:"commands,omitempty"`
	SessionInfo    *SessionInfo                 `json:"sessionInfo,omitempty"`
	SessionReady   *SessionReady                `json:"sessionReady,omitempty"`
	StopReason     string                       `json:"stopReason,omitempty"`
	// Auth is the sign-in request of an auth_required event.
	Auth *AuthRequest `json:"auth,omitempty"`
	// Todos is the task list of a todos event.
	Todos []Todo `json:"todos,omitempty"`
	// Terminal is the output or exit of a terminal event.
	Terminal *terminal.Output `json:"terminal,omitempty"`
	// Decision says how a request was settled, in a decision event.
	Decision *Decision `json:"decision,omitempty"`
	// Authority is the session's new authority state, in an authority
	// event.
	Authority *AuthorityState `json:"authority,omitempty"`
	// Queue is the change and the queue after it, in a queue event.
	Queue *QueueUpdate `json:"queue,omitempty"`
	// Steer marks a user_text event as an instruction steered into the
	// running turn (Turn is the turn it joined) and says how it went
	// there (see Session.Steer).
	Steer SteerVia `json:"steer,omitempty"`
	// Changes is what changed in the workspace, in a changes event.
	Changes *Changes `json:"changes,omitempty"`
	// Notice is the agent's notice (severity, title, description) in a
	// notice event that came from the agent.
	Notice *Notice `json:"notice,omitempty"`
	// Plans are all the agent's plans, by id in the order they came,
	// in a plan event built from the draft's plan_update and plan_removed
	// (Plan then holds the entries of its "items" plans, in that order).
	Plans []acpclient.PlanContent `json:"plans,omitempty"`
	// Err is the failure of an error, turn_end or exited event. In JSON it
	// is the object {"message", "code"} (see EventError), and decodes as an
	// *EventError.
	Err error `json:"-"`
	// Method is the vendor notification of an ext event.
	Method string `json:"method,omitempty"`
	// Raw is the update or notification params as the agent sent them, where
	// they carry something the typed fields do not: always for ext events
	// and vendor notifications; for the updates the bridge maps (tool calls,
	// plan, usage, modes, config, commands, session info, compaction) only
	// when the update object has a key the event does not carry (a _meta
	// outside tool calls, a vendor key). Text, thinking and user-text deltas
	// leave it empty: they may be merged, and they carry nothing beyond Text
	// and MessageID. A turn_start's Raw is the other way round: the _meta
	// the prompt was sent with (see WithPromptMeta), when it had one.
	Raw json.RawMessage `json:"raw,omitempty"`

	mergedText []byte // text deltas or terminal output merged while the consumer lagged
}

// Notice is a notice from the agent (the draft's "notice" update): advice
// for the user now, not part of the session's history. Severity is "info",
// "warning", "error" or the agent's own word.
type Notice struct {
	Severity    string          `json:"severity"`
	Title       string          `json:"title"`
	Description string          `json:"description,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// Usage is how full the context window is, and what the session has cost.
// Known is false when the fill is not measured (e.g. right after a
// compaction): show "unknown", never 0.
type Usage struct {
	Known bool  `json:"known"`
	Used  int64 `json:"used,omitempty"`
	Size  int64 `json:"size,omitempty"`
	// Percent is Used/Size in percent when both are known, or the agent's own
	// figure when it reports only a percentage.
	Percent float64                `json:"percent,omitempty"`
	Cost    *acpclient.Cost        `json:"cost,omitempty"`
	Turn    *acpclient.PromptUsage `json:"turn,omitempty"` // tokens of the turn that just ended
}

// Compaction statuses (Compaction.Status).
const (
	CompactionStarted   = "started"
	CompactionCompleted = "completed"
	CompactionFailed    = "failed"
	CompactionSkipped   = "skipped"
	CompactionCancelled = "cancelled"
)

// Compaction reports context compaction.
type Compaction struct {
	ID        string `json:"id,omitempty"`
	Status    string `json:"status"`
	Automatic bool   `json:"automatic,omitempty"`
	Summary   string `json:"summary,omitempty"`
	Message   string `json:"message,omitempty"`
	// Progress is the agent's progress figure (0-100) while it compacts,
	// when it reports one.
	Progress float64 `json:"progress,omitempty"`
	// Phase is the agent's own word for the step it reports, when it sends
	// one (for example "skipped" on a completed update that changed
	// nothing, which Status then reports as skipped).
	Phase string `json:"phase,omitempty"`
}

// SessionInfo is session metadata the agent reported. Cleared fields are
// empty with their Changed flag set.
type SessionInfo struct {
	Title            string `json:"title,omitempty"`
	TitleChanged     bool   `json:"titleChanged,omitempty"`
	UpdatedAt        string `json:"updatedAt,omitempty"`
	UpdatedAtChanged bool   `json:"updatedAtChanged,omitempty"`
}

// SessionReady says how a session was opened.
type SessionReady struct {
	// Resumed is true when the saved native session was loaded or resumed.
	Resumed bool `json:"resumed"`
	// ResumeError says why a saved session could not be resumed (a new one
	// was created instead); empty otherwise.
	ResumeError   string                   `json:"resumeError,omitempty"`
	AgentModes    *acpclient.ModeState     `json:"agentModes,omitempty"`
	Models        *acpclient.ModelState    `json:"models,omitempty"`
	ConfigOptions []acpclient.ConfigOption `json:"configOptions,omitempty"`
	// Replaced is the native session id this session was meant to resume
	// when a new one was created instead; Reason says why
	// (ReplacedAfterRestart or ReplacedOnOpen), ResumeError what failed.
	Replaced string `json:"replaced,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// HistoryJournaled: the Host's journal already held events of the
	// session's key when it was resumed; ReplaySkipped counts the replayed
	// events dropped as history (see SessionConfig.KeepJournaledReplay).
	HistoryJournaled bool `json:"historyJournaled,omitempty"`
	ReplaySkipped    int  `json:"replaySkipped,omitempty"`
	// Fork links a session made by Session.Fork to the session it was
	// forked from.
	Fork *ForkOrigin `json:"fork,omitempty"`
}
