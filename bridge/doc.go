// Package bridge is what a desktop or server app embeds to host coding
// agents: it starts agents, runs their sessions, answers their permission
// requests under the app's policy, serves their file reads and writes, and
// hands the app one ordered stream of one Event type for all of them.
//
// A Host owns the stream (Events) and many Bridges; a Bridge is one agent
// process (started from any acpclient.Transport) and its Sessions. A Session
// runs turns with Prompt; everything the agent does arrives as Events.
//
// # Guarantees
//
// Order: a session's events arrive in the order the agent sent them. Pos
// numbers every event of a Host once, in stream order, across all agents;
// Seq counts the events of one session key without gaps, also when the
// agent's own session id changes. With a Journal both continue across app
// restarts: Pos after the journal's last one, each key's Seq after its last
// one. Agent-wide events (Key "") are counted per bridge, from 1 in each
// Host. A permission event follows the tool call that
// announced it; turn_end follows every update sent before the prompt's
// answer, and updates sent after it come after turn_end, marked Late.
// Updates that arrive before session/new answers are held and delivered first.
// That buffer is bounded per Bridge (Config.EarlyUpdates): updates for an id
// that no session claims are dropped when it is full or once they have
// waited for a short while, and the first drop is reported as an error event
// (ErrEarlyUpdatesDropped).
// Replayed history from session/load is marked Replay.
//
// Nothing else is dropped: a consumer of Events that reads slowly slows the
// agents down. While it lags, consecutive text deltas of one message, and
// consecutive pieces of one terminal's output, may be merged into one
// event; the journal and subscribers see exactly the events Events
// delivers, merged the same way.
//
// Command output: terminal events (KindTerminal) carry the output of a
// command that runs for a tool call, piece by piece, and its exit, whatever
// runs it: the bridge (Source "client"), the agent reporting in tool call
// _meta (Source "meta": terminal_info, terminal_output,
// terminal_output_delta and terminal_exit, a vendor extension several
// agents share, declared with Config.AgentTerminalOutput)
// or the draft protocol's terminal_update and terminal_output_chunk
// (Source "update"; a snapshot that does not extend the output is sent
// whole, marked Reset). A tool_call_update that carries only output is a
// terminal event and no tool event. The SessionView keeps the last
// 64 KiB of each row's output.
//
// What the bridge declares and types: boolean config options
// (ConfigOption.BoolValue; one whose value is not a boolean keeps its
// JSON in Raw), and, from the draft protocol, compaction (the chunks of a
// compaction's summary are folded into the Summary its next compaction
// event carries), plan operations (plan_update and plan_removed are
// folded into plan events that carry every plan, Plans, and their entries,
// Plan, so apps that show one plan keep working) and notices (KindNotice
// with Notice). Message chunks that are not text arrive on text, thinking
// and user_text events as Content, their data kept up to 1 MiB and
// counted in ContentDropped past it. elicitation/complete closes the url
// elicitation it names (KindElicitationComplete). A subagent's tool calls
// name the call they run under in ToolCall.Parent, where the agent says
// (Provider.ToolParent). What does not fit (a plan of an unknown type, the
// removal of a plan never sent, a notice without a title, content of an
// unknown type) is passed on as ext, whole, and the session goes on. An
// MCP server the agent cannot take is left out with a notice naming it,
// unless it is Required: opening the session then fails, naming it.
//
// Policy: Ask, Plan and a read-only tool policy cancel permission requests
// and refuse file writes; Build asks the app (a permission Event it answers
// with Allow or Reject); Full allows once, and cancels when there is no
// usable allow-once option (it never rejects on its own). Only once-options
// are ever chosen, so the app's current mode stays authoritative, also over
// the requests already waiting: SetPolicy, and a change of the session's
// authority, settle them again under the new rules (see PermissionRequest);
// unknown modes fail closed to Build. An answer names an option by its id, and an
// agent may compare ids loosely, so an id is usable only when no other
// option's id equals it after trimming surrounding space and folding case;
// and if any option has an empty id (as one that is not a string decodes)
// the whole request is ambiguous. An ambiguous option is never selected: in
// every mode the request is then answered "cancelled" (Allow and Reject
// return ErrAmbiguousOption).
//
// Authority: the policy binds only what the agent asks, its permission
// requests, fs/* and terminal/* calls. An agent's own tools write to disk
// and run commands without any of them, and an agent in one of its own
// auto-approving modes, or started with a flag that makes it act unasked,
// does not ask at all; "file writes refused" is no sandbox. So each session
// reports whether the host can interpose (Session.Authority, an authority
// event at open and on every change): AuthorityProtected,
// AuthorityAgentAutonomous or AuthorityUnknown, judged from the agent's
// ModeTable (Profile.Modes, Config.AgentModes; without one the agent is
// unknown, never protected), and from the agent's own configuration where
// that decides whether it asks (ModeTable.Learn reads it on the agent's
// host, over SFTP for a remote one: per-mode agent specs or a permissions
// file, as the profiles in bridge/profiles read them). Outside ModeFull the bridge keeps a tabled agent asking:
// when the session opens (before its session event), when the agent
// reports a mode or config change, and on SetPolicy, an agent mode or
// option value that acts unasked, or that the table does not list, is
// moved (session/set_mode, session/set_config_option): in Ask and Plan to
// the agent's plan mode, else its asking mode; in Build to its asking
// mode, where another mode that asks may stay; host Plan also moves an
// asking agent into its plan mode. Unknown is reported, not refused,
// unless the policy is Strict. An agent known to act unasked that cannot
// be moved makes the session fail closed in Ask, Plan and read-only:
// Prompt returns an *AuthorityError (ErrAgentAutonomous, or
// ErrAgentModeUnknown under Strict), a running turn is cancelled, until a
// change makes it safe. In Build the app is asked once per session for its
// consent instead (an authority event with ConsentNeeded, prompts refused
// meanwhile); Session.GrantAutonomy gives it, and an escalation the app
// chose in the vendor launch options counts as given; the session then
// reports agent-autonomous. SetAgentMode and SetConfigOption refuse
// values that act unasked before anything is sent. Full moves nothing:
// the app's choice of it is the consent, and an auto mode is then
// reported agent-autonomous. A launch flag that escalates
// (ModeTable.LaunchEscalation) holds for the process while policies are
// per session, so the check is made per session: OpenSession refuses a
// session in Ask, Plan or read-only before the agent is started, Relaunch
// refuses to add the flag while such a session is open, and a session
// that moves there on such a launch fails closed.
//
// Files: the policy is the session's one write rule. Files with a write gate
// of their own (ReadOnlySetter, as fsroot's roots are) are switched by it
// when the session opens and on every SetPolicy, and do the refusing; other
// Files are gated by the bridge with the same rule. The session's
// ExternalDirectories are its one grant list: Files that are a GrantSetter
// take it when the session opens and whenever Session.SetGrants changes it,
// and so does an agent with a vendor method for it.
//
// Requests that wait on the user (PermissionRequest, ElicitationRequest,
// AuthRequest) work alike: answered once from any goroutine (a second answer
// is ErrAlreadyAnswered), Done closes on the answer, the watchdog is paused
// while they wait, and a cancelled or ended turn, Bridge.Close or the agent
// giving up answers them (cancelled, or the sign-in declined). Every request
// gets exactly one decision event (KindDecision) when it is settled, saying
// the outcome and who settled it: the app, the policy on its own (with the
// rule, such as "Ask mode cancels permission requests"), or the host (turn
// cancelled or ended, agent exited, bridge closed). With a Journal that is
// an audit trail of every decision.
//
// Liveness: a turn has an inactivity watchdog (ten minutes by default, no
// total limit). Any update or agent request resets it; time the user spends
// on a permission request, a question or a sign-in does not count. On expiry
// the bridge cancels the turn. A cancel, the watchdog's or the app's, goes
// in protocol order: session/cancel first, then the pending requests are
// answered "cancelled". An agent that has not ended the turn within
// Config.CancelGrace (ten seconds by default) is not waited for: the turn
// ends cancelled with ErrCancelIgnored and the process is killed so a
// replacement starts cleanly. A process that dies mid-turn is
// reported as an error quoting its stderr, then turn_end, then exited; the
// next Prompt starts a new process and resumes the session natively. Every
// wait on the agent ends when its process does, with its exit error: the
// cancel grace, a retry's backoff, a pending permission request, a sign-in
// only that process could carry out, a profile's wait for what follows a
// compaction.
//
// # Sessions and turns
//
// A session has a host key (SessionConfig.Key, random when empty) that
// never changes; the agent's own session id (Session.ID, Event.Session)
// may, when a restarted agent cannot resume, and the session event then
// says which id it replaced and why (SessionReady.Replaced, Reason).
// Bridge.Session finds a session by its key or any native id it had.
// With a Journal the session's Record (native ids, cwd, grants, policy,
// model, effort, agent mode, config option values, title, turns) is kept
// under the key, and OpenSession with that key alone resumes it, also
// after an app restart: in its recorded cwd (another is refused with
// ErrCwdChanged unless SessionConfig.MoveCwd), set back to its model,
// effort, agent mode and option values under the authority rules (a
// refused one is an error event). Session.Ready says how it opened.
// FindSession resolves a user's key or agent session id to a record,
// refusing an id several sessions had (ErrAmbiguousSession). When the journal already holds the
// session's history, the bridge resumes it with session/resume where the
// agent offers it: no replay, so a long session reopens at once, its
// history read from the journal. An agent that can only load replays
// anyway, and what it replays of the history is dropped rather than
// delivered (and journaled) again. SessionConfig.KeepJournaledReplay asks
// for the agent's own replay instead (session/load).
//
// A prompt can carry _meta for the agent, W3C trace context above all
// (WithPromptMeta puts it in the prompt's context); turn_start carries it
// too, so the journal says which trace each turn belonged to.
//
// Session.Close ends a running turn, sends session/close where the agent
// supports it and frees the session (its record stays, to be resumed);
// Session.Delete and Host.DeleteSession also delete it on the agent and from
// the journal. Bridge.ListSessions merges the agent's session/list, the
// journal's records and the open sessions; Host.Sessions merges the same
// across bridges, running or not (agents are asked where they run).
//
// Session.Fork makes a new session, under a key of its own, that goes on
// from the current one where the agent advertises session/fork; the
// fork's Record, session event and list entry carry its ForkOrigin (the
// parent's key and the turn it branched after), so an app can draw its
// sessions as a tree. A fork's history is read through its parent rather
// than copied: History, and Host.Subscribe with the fork's key, yield the
// parent's events up to the fork, keeping their key, Pos and Seq, then the
// fork's own. Rewinding, a fork from the state before an earlier turn, is
// done only where the agent can fork at that point, and no protocol call
// offers it yet: Fork refuses it with acpclient.ErrUnsupported, and
// Session.CanFork says so before the app asks. A transcript fork is the
// app's explicit fallback (ForkOptions.Transcript): a new session whose
// first prompt carries a marked transcript of the turns before the point,
// read from the journal; ForkOrigin.Transcript says so.
//
// Turns are numbered per session (Event.Turn, continuing from the record).
// A tool row belongs to its turn: agents reuse tool call ids, and the same
// id in a new turn is a new row. At turn end every row still open is closed
// with status ToolUnfinished before turn_end; late updates for it still
// arrive, marked Late and carrying the number of the turn they belong to.
// ErrBusy means one thing, a Prompt while a turn runs, and turn_end is
// delivered only once the session accepts the next prompt. Control calls
// (SetAgentMode, SetConfigOption, SetModel, SetEffort) are serialised among
// themselves and may run during a turn, as the protocol allows; those that
// may not (Compact, a vendor effort method) return ErrTurnRunning. A
// successful SetAgentMode or legacy SetModel is reported as an agent_mode or
// model event, since some agents confirm it only in text or not at all. A
// value kept in two views changes in both at once: the agent mode and a
// "mode" config option, the legacy model list and a "model" option (with the
// model and effort kept for reattaching); a call that changes one updates
// the other and reports each as its event.
//
// Vendor differences live in Provider values (hooks and data), never in
// forks of the bridge.
//
// # Queue and steering
//
// Prompt during a turn is ErrBusy; Enqueue is the app's other choice, per
// call: the prompt waits in the session's queue and runs, in order, as a
// turn of its own once no turn runs (at once on an idle session). Every
// change of the queue is a queue event listing the whole queue
// (QueueUpdate), the SessionView keeps it, and the record keeps it, so a
// session resumed after an app restart (or a Host shutdown) has its queue
// back, paused: nothing runs until ResumeQueue. A turn that ends in an
// error or a refusal pauses a queue that holds prompts; Cancel keeps the
// queue (ClearQueue first drops it); Close drops it, with an event. The
// queue is bounded (SessionConfig.QueueLimit, ErrQueueFull).
//
// Steer puts an instruction into the running turn by the way the agent
// offers, which SteerMode names before the app asks: the draft protocol's
// session/inject, the _session/steering extension (advertised in the
// initialize result's _meta.steering.supported), or a profile's vendor
// request (Provider.SteerRequest). The steered text is a user_text event
// marked Steer with the turn it joined, emitted where the agent's answer
// arrives among its updates. Without a way, with no turn running (one
// that has just ended included), or when the agent fails to take it (an
// error event reports that first), the fallback chosen per call applies:
// SteerQueue puts the text first in the queue, SteerInterrupt cancels the
// turn and runs it next, and none fails (ErrNoTurn,
// acpclient.ErrUnsupported, the agent's error). Steered text is never
// dropped without an error.
//
// # Subscribers and snapshots
//
// Events is the one stream that holds the agents back. Any number of other
// readers use Host.Subscribe with a Cursor (after a Pos, of one session key
// or bridge): history first, then live events, with no gap and no duplicate
// between them. Publishing to subscribers never waits: the Host keeps the
// newest events in memory (HostOptions.SubscriberTail), and a subscriber
// that falls behind reads the Journal until it is back in that tail;
// without a Journal it ends with ErrHistoryGone. A browser tab reconnecting
// with its last seen Pos resumes exactly after it.
//
// A UI that connects late calls Host.Snapshot, the state of every session
// (tool rows of the current turn, pending requests in arrival order and
// answerable, modes, config, models, usage, title, whether a turn runs) at
// one Pos, then subscribes after that Pos. The state is a SessionView
// folded from events, so an app can rebuild it from journaled events too.
// Each batch the Host takes from its queue is numbered, appended to the
// Journal in one call, published to subscribers, folded into the views and
// only then delivered on Events; a failing Journal is reported (an error
// event wrapping ErrJournal, and HostOptions.Logger) and does not stop
// delivery.
//
// # Profiles
//
// A Profile names an agent program: where to find it, the flags that carry
// the app's launch choices, and its Provider. This package holds the
// machinery only; the built-in profiles and the registry that finds them
// by name are in package bridge/profiles, one subpackage per agent with
// vendor semantics of its own. A profile is written against this package's
// exported API alone, so an app can add its own the same way: LaunchOptions
// carries the generic choices, an AgentMode for agents that take their own
// mode at launch, and a Vendor value whose type the profile's package
// defines (VendorOptions reads it).
//
// Host.StartProfile resolves the binary the way a GUI app must (a Resolver:
// override, PATH, the login shell's PATH, npm, ~/.local/bin, Homebrew) and
// executes it directly, never through a shell; Bridge.Relaunch restarts it
// with new choices and resumes its sessions; Doctor reports on each
// configured one. Launch options that change authority (an agent mode, an
// approval policy) restart the process instead of being sent live, and are
// refused while a turn runs. A sign-in that needs new environment variables
// and a Relaunch replace the process the same way.
//
// # Signing in
//
// Agents ask for sign-in in different ways: session/new or the prompt
// failing with -32000, methods in initialize or in error.data, env_var
// methods, terminal logins in _meta. The bridge turns all of them into one
// auth_required Event whose AuthRequest the app answers; it then signs in
// (restarting the agent with new environment variables, or running the
// agent's login command through Config.TerminalLogin) and retries the call
// that failed. Values given for sign-in are secrets: they reach the agent's
// environment only, and are masked in errors and logs. Bridge.Logout signs
// the agent out (the protocol's logout, where the agent advertises it) and
// says so in an agent-wide notice event; a notice rather than a kind of its
// own, since nothing waits on an answer and the next call that needs a
// sign-in asks for one as usual.
//
// # Terminals
//
// With Config.Terminals set, the bridge advertises terminal: true and runs
// the agent's commands (terminal/create, output, wait_for_exit, kill,
// release) through a terminal.Runner, where the agent's files are:
// terminal.Local for a local agent, terminal.SSH over the agent's own
// connection for an agent started over SSH (chosen by the bridge unless
// terminal.Options.Runner says otherwise). Remotely each command runs under
// the remote agents' wrapper: its own session on the host, killed when the
// terminal ends or the connection drops, its cwd resolved over SFTP. The capability does not depend on
// the mode; each terminal/create is decided by the session's policy, by the
// write rule, since a command can change any file: refused in Ask, Plan and
// read-only with an error naming the mode, run in Build and Full without a
// second prompt (the agent asks permission for its tool first). The cwd
// (default: the session's) must lie inside the session's cwd or its
// external directories, symlinks resolved.
//
// The command and its arguments are executed directly, never through a
// shell, with a minimal base environment (terminal.Local: PATH, HOME, USER,
// LOGNAME, LANG, LC_ALL, LC_CTYPE, TZ, TMPDIR as this process has them,
// TERM=dumb) plus the agent's env; nothing else of the host's environment
// reaches it. Stdout and stderr share one pipe, so they keep their order.
// The bridge keeps the last outputByteLimit bytes (default 1 MiB, at most
// terminal.Options.MaxOutputByteLimit), dropping from the start at a UTF-8
// character boundary and answering truncated: true: memory stays bounded
// whatever the command prints. The exit status is an exitCode, or the name
// of the signal that ended the command ("SIGKILL").
//
// terminal.Options.PTY gives local commands a pseudo-terminal instead of
// the pipe, for apps that render a terminal emulator: commands see a
// terminal and their output has a terminal's CR LF line ends.
//
// Each command runs in its own process group, with the guarantees of an
// agent process: a parent-death signal, a sentinel that kills the group if
// the host dies, the group killed when the command exits. kill ends the
// group (the terminal keeps its output until released); release ends it if
// it runs and forgets its id, which later calls refuse; closing the session
// (first thing, so an agent waiting on a command can end its turn), the
// agent's exit and Bridge.Close end every terminal. wait_for_exit is
// answered when the command ends, without holding up the connection.
//
// The output also arrives live as terminal events (Event.Terminal, Source
// "client", ID the terminalId): the first as soon as output comes, then at
// most one every 25ms with what arrived since, at most 16 KiB of it (the
// newest, Truncated when some was skipped), and a last one with Exit.
// ToolCallID names the row that shows the output: the tool call whose
// content names the terminal (acpclient.ToolCallContent.TerminalID). Output
// that went out before any tool call named it is sent again for the row,
// Reset, once one does (terminalrows.go decides the row for every kind of
// terminal).
//
// # Event JSON
//
// An Event has one JSON form, the one json.Marshal writes; json.Unmarshal
// reads it back into an equal Event. Event.AppendJSON writes the same bytes
// encoding the event once (json.Marshal checks and copies what a
// MarshalJSON returns), as the journal does. The journal stores it,
// subscribers receive it and acprun --events prints it, one object per
// line:
//
//	{"pos":42,"bridge":"agent-1","key":"x4dq3xw2ohnx5m7ke2pjflqtyu","session":"sess_1","seq":5,"turn":2,"kind":"text","time":"2026-03-01T10:00:00Z","text":"Hello","messageId":"m1"}
//
// The common keys come first, in this order: pos, bridge, key (the host's
// session key), session (the agent's session id), seq, turn, kind, time
// (RFC 3339), then replay and late when true. Agent-wide events have no
// key, session or turn; events outside a turn have no turn. A failure
// comes last, as "error":{"message":…,"code":…}: the error's text and, when
// the failure is the agent's JSON-RPC error answer, its code; it decodes as
// an *EventError. "raw" holds the agent's own update or notification where
// it carries something the typed keys do not (see Event.Raw). Keys are
// camelCase, mean the same in every kind, and are left out when empty.
//
// Requests decode as records: a PermissionRequest, ElicitationRequest or
// AuthRequest read from JSON keeps its data and is Done, and its answer
// methods return ErrRequestRecord. Answer the live request, the one an
// event from the Host carries.
//
// One example per kind, the common keys of the line above left out
// (session_closed has no keys of its own):
//
//	text           "text":"Hello","messageId":"m1"
//	thinking       "text":"The user wants a fix","messageId":"m0"
//	user_text      "replay":true,"text":"Fix the bug","messageId":"u1"
//	tool_start     "tool":{"id":"call_1","title":"Edit a.go","kind":"edit","status":"pending","locations":[{"path":"/w/a.go"}],"rawInput":{"file_path":"/w/a.go"}}
//	tool_update    "tool":{"id":"call_1","title":"Edit a.go","kind":"edit","status":"in_progress","content":[{"type":"diff","path":"/w/a.go","newText":"package a\n"}]}
//	tool_end       "tool":{"id":"call_1","title":"Edit a.go","kind":"edit","status":"completed"}
//	permission     "tool":{"id":"call_1","title":"Edit a.go","kind":"edit","status":"pending"},"permission":{"id":"perm-1","tool":{"id":"call_1","title":"Edit a.go","kind":"edit","status":"pending"},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}
//	decision       "decision":{"request":"perm-1","type":"permission","outcome":"allowed","optionId":"allow","by":"app"}
//	plan           "plan":[{"content":"Fix the bug","priority":"high","status":"in_progress"}]
//	todos          "plan":[{"content":"Fix the bug","priority":"medium","status":"in_progress"}],"todos":[{"id":"1","number":1,"content":"Fix the bug","status":"in_progress"}]
//	usage          "usage":{"known":true,"used":50000,"size":200000,"percent":25,"cost":{"amount":0.12,"currency":"USD"}}
//	compaction     "compaction":{"id":"c1","status":"completed","automatic":true,"summary":"Fixed a.go"}
//	agent_mode     "agentMode":"architect"
//	model          "models":{"currentModelId":"m2","availableModels":[{"modelId":"m1","name":"Model One"},{"modelId":"m2","name":"Model Two"}]}
//	config         "configOptions":[{"id":"model","name":"Model","category":"model","type":"select","currentValue":"m1","options":[{"value":"m1","name":"Model One"}]}]
//	commands       "commands":[{"name":"review","description":"Review the diff"}]
//	session_info   "sessionInfo":{"title":"Fix the bug","titleChanged":true}
//	session        "sessionReady":{"resumed":true,"agentModes":{"currentModeId":"code","availableModes":[{"id":"code","name":"Code"}]}}
//	session_closed
//	terminal       "terminal":{"id":"term-1","toolCallId":"call_3","source":"client","data":"ok  ./...\n"}
//	turn_start     "text":"Fix the bug","raw":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
//	turn_end       "stopReason":"end_turn"
//	error          "error":{"message":"bridge: session/prompt: overloaded (code -32603)","code":-32603}
//	exited         "error":{"message":"agent exited: exit status 3"}
//	ext            "method":"_vendor/progress","raw":{"sessionId":"sess_1","step":3}
//	elicitation    "elicitation":{"id":"ask-2","message":"Which branch?","mode":"form","schema":{"type":"object","properties":{"branch":{"type":"string"}}}}
//	elicitation_complete "elicitation":{"id":"ask-4","message":"Sign in to the tracker","mode":"url","url":"https://tracker.example/login","elicitationId":"e-1"}
//	auth_required  "auth":{"id":"auth-3","call":"session/new","methods":[{"id":"key","name":"API key","type":"env_var","vars":[{"name":"OPENAI_API_KEY","secret":true}]}]}
//	notice         "text":"Recovered from a backend failure"
//	authority      "authority":{"state":"protected","reason":"agent mode \"default\" asks before acting","hostMode":"build","agentMode":"default"}
//	queue          "queue":{"change":"queued","id":"q-7x2k","prompts":[{"id":"q-7x2k","content":[{"type":"text","text":"Now the docs"}],"text":"Now the docs","queued":"2026-03-01T10:00:00Z"}]}
//	changes        "changes":{"op":"turn","from":"5b1e0c9a4f7d2e8b3a6c1d0f9e8d7c6b5a4f3e2d","to":"8c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d","files":[{"status":"M","path":"a.go","added":2,"removed":1}]}
//
// # Remote workspaces
//
// A Workspace on an SSH host (its SSH field, an sshconn.Destination) runs
// the agent there and serves its files over SFTP. SSHHosts keeps one
// sshconn.Conn per host and hands it to both (Transport, Files) and to
// profiles (HostFS), so one connection carries everything and is dialled
// again after a drop. The bridge's own files (the FileStore, settings
// overlays written through HostFS) use fsroot's atomic write.
//
// # Workspace custody
//
// With SessionConfig.Checkpoints a session records its workspace before
// and after every turn (package checkpoint: git, run where the files are,
// with a git directory and index of its own; the user's repository is
// never read or written beyond its ignore rules). At the turn's end, after
// turn_end, a changes event lists the files the turn added, modified,
// deleted or renamed with their line counts, whoever changed them; an
// fs/write_text_file adds one with the text before and after as it
// happens. Session.TurnDiff gives a turn's unified diff, Session.Restore
// the state before a turn and Session.RevertFile one file's, each refused
// while a turn runs, recording the workspace first so it can be undone,
// and refusing to overwrite a file changed since the last turn unless
// forced. Session.RestoreCheckpoint(From) undoes a restore, From being
// the checkpoint its changes event names. The checkpoints are refs of
// their git directory and outlive the app; the changes events are
// journaled. What a turn changes outside the workspace (granted
// directories elsewhere, the home directory) is not recorded. A fork
// records its turns as its parent does. With SessionConfig.Worktree a
// session works in a git worktree of its own, on a new branch, made where
// the agent runs and removed when the session is deleted (see Worktree).
//
// While a turn runs, changes events of Op "touch" report the files it
// touches, at most one every 250ms, for a UI to follow along: through
// fsnotify locally, through inotifywait on an SSH host that has it; where
// there is no watcher, one such event says so and the turn's event still
// lists every file. The watch starts with the first turn and runs until
// the session closes (an inotify instance locally, an SSH session with
// inotifywait remotely), so that a turn's checkpoint before it is no walk
// of the workspace when nothing changed since the last turn ended. A new
// session (not resumed, not a fork, not in a worktree) starts its watch
// and walks its workspace as it opens, while the agent answers
// session/new (and while it starts, on a Bridge added with Host.Add and
// not started yet), so that its first prompt too goes out without a walk; a
// session never prompted stops that watch after ten idle minutes, as one
// whose last turn ended.
//
// # Where things are
//
// A newcomer's map of the package, concept by concept; read it top down,
// the way the package is layered (the Host at the top, the pieces a
// Session is made of below it, the vocabulary they share at the bottom).
// A file uses names defined in the files below it, as far as the package
// allows: internal/structure counts the references that run back up and
// holds them to a budget, and lists the worst when run with -v.
//
//	Host, its event stream      host.go (Host, look-ups by id and key), hostoptions.go, hostbridges.go (Start, Add, StartProfile, Remove, Shutdown, Close), stream.go (queue), pump.go (numbering, journal, delivery)
//	subscribers, snapshots      subscribe.go (Cursor, Subscribe, History), hub.go (the ring of the newest events), snapshot.go (Snapshot, the live views), view.go (SessionView and its rows: a pure fold over events)
//	journal, records            journal.go, store.go (Record, Store, FileStore), records.go (sessionRecords: a session's record written and read back), findsession.go
//	Bridge (one agent process)  bridge.go (its state, the agent client's type, its transport and program), process.go (start, exit, Close), agentcalls.go (sessions by agent id; the agent's calls routed to them, url elicitations remembered), bridgeconfig.go, lifecycle.go (relaunch), capabilities.go, errors.go (errors of no one concern)
//	agent-wide sign-in          authrequest.go (AuthRequest and its answers), auth.go (carrying a sign-in out), withheld.go (the agent's environment, what it left out), logout.go
//	requests to the user        userrequest.go (what every request shares, its Decision), await.go (waiting: registration, watchdog, decision events)
//	profiles, launching         profile.go (Profile, LaunchOptions, Launch), profile_hooks.go (provider events), profile_support.go, profile_env.go, profile_fs.go, provider.go, resolve.go, workspace.go, hostfs_ssh.go
//	health check                doctor.go
//	Session: its state          state.go (SessionConfig, the Session's fields and each concern's state and locks), meter.go (the context meter)
//	Session: opening, closing   open.go (OpenSession in order), session.go (emitting, accessors, closed checks), attach.go (sessionNative: load or create, replay, reattach), mcpservers.go, restore.go, sessions.go (Close, Delete, the session lists)
//	forks                       fork.go (Session.Fork, CanFork), forkhistory.go (a fork's lineage: which of its parents' events are its history), forkseed.go (transcript forks), forkcheckpoints.go (its checkpoints)
//	turns                       turn.go (sessionTurns: begin, finish, cancel, claim), retry.go (repairing a failed prompt), watchdog.go, ctxmutex.go, promptmeta.go
//	the prompt queue, steering  queue.go (sessionQueue: queued turns, their events and record), steer.go
//	control calls               control.go (sessionControl: mode, model, options, compaction, holding prompts off for a compaction or fork), effort.go, mirror.go (the agent's reported modes and options)
//	the agent's updates         updates.go, updaterun.go (the one routing path), runupdate.go, early.go (before the session is known: the buffer), earlyhold.go (the Bridge holding, claiming and purging), rawkeys.go, memsize.go, folds.go and planfold.go (draft updates that patch earlier ones), content.go (message content bounds)
//	tool rows                   tools.go (the one merge of tool calls into rows), tooltitle.go, todo.go
//	policy and permissions      policy.go (the rule and its name, once), asks.go (a new request: the rule or the app), permission.go (PermissionRequest, answering, governs), regovern.go (SetPolicy; waiting requests settled again), elicitation.go
//	authority                   authority.go, authority_judge.go (judging), authority_enforce.go (moving the agent), authority_refuse.go
//	files                       fileapi.go (Files and what a session drives in them), files.go (sessionFiles: fs/* calls, the write gate, grants, the default root), filelimit.go
//	checkpoints, undo           changes.go (sessionCheckpoints: before and after a turn, restores), changeslive.go, undo.go, worktree.go
//	terminals                   package bridge/terminal (runners, the set serving terminal/*, output windows); here terminal.go (the glue: policy, cwd, the owner), terminalrows.go (which row shows a terminal's output), terminalmeta.go (terminals the agent reports)
//	events and their JSON       event.go, eventvalues.go (tool call, changes, queue, fork, steering and worktree values), eventjson.go, eventjsondelta.go, jsonstring.go, clock.go
//
// # Lock order
//
// A lock may be held while taking only the locks after it in this list,
// never one before it. Another session's or bridge's locks are taken only
// through that session's or bridge's own methods (Session.listEntry,
// sessionTurns.waitEnded, tryHold, release and watchdog,
// Bridge.openByKey and addOpen; Session.Fork opens the fork, holding the
// parent's turns.mu and ctl.sem, through the fork's own opening), and a
// Session's concern types (sessionNative, sessionTurns, sessionControl,
// sessionAuthority, sessionFiles, sessionQueue, sessionRecords and
// sessionCheckpoints, all declared in state.go) keep their
// state under their own lock where they have one and under Session.mu
// otherwise.
//
//	Session.closeMu            one Close at a time
//	Session.turns.mu           a turn, a compaction, a reattach (ctxMutex)
//	Session.ctl.sem            control calls and attaching (ctxMutex)
//	Session.native.mu          grants against attaching; guards the
//	                           session's connection (native.conn)
//	Bridge.authMu              one sign-in at a time
//	Bridge.startMu             one process start at a time
//	Bridge.routeMu             update delivery against registration; held
//	                           while an update is handled, so the locks below
//	                           are taken under it
//	Session.auth.settleMu      judging against reporting the authority state
//	Session.queue.emitMu       one queue change, its record and its event at
//	                           a time (a turn's end takes it under the turn
//	                           lock and while an update is handled)
//	Session.rec.mu             record writes
//	Session.ckpt.mu            the session's checkpoint store and the
//	                           checkpoints before its turns (opening the
//	                           store reads the bridge's transport under it)
//	liveChanges.mu             a turn's live changes; held while their
//	                           changes event is emitted, so never taken
//	                           under Session.mu, Bridge.mu or Host.mu
//	Host.mu                    the Host's bridges and its closing
//	Bridge.mu                  the bridge's process, maps and early updates
//	Session.mu                 the session's state, the tool rows, the turn
//	                           running, authority and control state
//	leaves                     the stream's queue (eventQueue.mu; emitting may
//	                           wait for room, so it is never done under
//	                           Session.mu, Bridge.mu or Host.mu), the hub's
//	                           and the live views' locks, the waiting
//	                           requests' (pendingRequests.mu), a request's own
//	                           lock (userRequest.mu), the url elicitations
//	                           a bridge remembers, the watchdog's, the
//	                           queue's (sessionQueue.mu), the
//	                           FileStore's, the launch's and SSHHosts'
//
// Session.mu is the last lock before the leaves: nothing of the package
// but a leaf is taken under it (the session's Files are told of a policy
// change under it, and must not call back into the session).
//
// Bridge.permSeq and authSeq are atomic counters, not locks. The
// terminals' locks (bridge/terminal: the Set's, then one terminal's) come
// after Session.closeMu (Close ends the session's commands) and before
// Session.mu: under them the set asks its Owner (terminalrows.go reads the
// session's rows under Session.mu) and emits the terminal's events.
package bridge
