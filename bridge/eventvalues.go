package bridge

import (
	"encoding/json"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/checkpoint"
)

// Plain values that events and records carry for tool rows (tools.go),
// the workspace's changes (changes.go), the prompt queue (queue.go), forks
// (fork.go), steering (steer.go) and worktrees (worktree.go): the
// vocabulary those concerns share with the event stream and the session's
// record, kept below them. (Decision, which every request carries, is in
// userrequest.go.)

// QueuedPrompt is a prompt waiting in a session's queue (Session.Enqueue).
type QueuedPrompt struct {
	// ID names the prompt for RemoveQueued and MoveQueued and in queue
	// events; it is unique within the session.
	ID string `json:"id"`
	// Content is what will be sent as the turn's prompt.
	Content []acpclient.ContentBlock `json:"content"`
	// Text is the text of Content, for display.
	Text string `json:"text,omitempty"`
	// Queued is when it was queued.
	Queued time.Time `json:"queued"`
	// Meta is the _meta its session/prompt will carry (see
	// WithPromptMeta), kept with it in the session's record.
	Meta json.RawMessage `json:"meta,omitempty"`
}

// QueueUpdate is a change of a session's prompt queue, the payload of a
// queue event. Change says what happened:
//
//	queued     ID was added (Enqueue, or Steer's fallback)
//	started    ID left the queue as the turn the event carries (Event.Turn)
//	removed    ID was removed (RemoveQueued)
//	moved      ID was moved (MoveQueued)
//	cleared    every prompt was removed (ClearQueue)
//	paused     the queue stopped running prompts; Reason says why (a turn
//	           that ended in an error or a refusal, a turn that could not
//	           begin)
//	resumed    ResumeQueue let it run again
//	restored   a resumed session has its queue back from its record,
//	           paused until ResumeQueue
//	dropped    the session was closed and its queue dropped
type QueueUpdate struct {
	Change string `json:"change"`
	// ID is the prompt the change concerns, when it concerns one.
	ID string `json:"id,omitempty"`
	// Reason says why the queue paused or was dropped.
	Reason string `json:"reason,omitempty"`
	// Paused says whether the queue is paused after the change: its
	// prompts wait until ResumeQueue.
	Paused bool `json:"paused,omitempty"`
	// Prompts is the whole queue after the change, first to run first.
	Prompts []QueuedPrompt `json:"prompts,omitempty"`
}

// ForkOrigin links a forked session to the session it was forked from.
type ForkOrigin struct {
	// Parent is the host key of the session forked.
	Parent string `json:"parent"`
	// ParentSession is the parent's native session id at the fork.
	ParentSession string `json:"parentSession,omitempty"`
	// AfterTurn is where the fork branched: it holds the parent's turns 1
	// to AfterTurn, and its own turns are numbered from AfterTurn+1.
	AfterTurn uint64 `json:"afterTurn"`
	// Transcript: the agent did not fork; the fork is a new native session
	// whose first prompt carries a transcript of those turns (see
	// ForkOptions.Transcript).
	Transcript bool `json:"transcript,omitempty"`
}

// SteerVia says how steered text reaches the agent: a way the agent
// offers (SteerMode), or the fallback an app chooses for agents without
// one (Steer's fallback). The zero value, as a fallback, fails.
type SteerVia string

// Ways to steer and fallbacks.
const (
	// SteerInject: the draft protocol's session/inject in "steer" mode,
	// for agents that advertise sessionCapabilities.inject with it.
	SteerInject SteerVia = "inject"
	// SteerExtension: the _session/steering extension request, for agents
	// that advertise _meta.steering.supported in their initialize result.
	SteerExtension SteerVia = "extension"
	// SteerProvider: the vendor request the agent's profile names
	// (Provider.SteerRequest), for agents with a method of their own.
	SteerProvider SteerVia = "provider"
	// SteerQueue, as a fallback: the text is queued as the next prompt
	// (first in the queue), to run as its own turn when this one ends.
	SteerQueue SteerVia = "queue"
	// SteerInterrupt, as a fallback: the running turn is cancelled and the
	// text sent at once as the next turn (first in the queue, which is
	// resumed if it was paused).
	SteerInterrupt SteerVia = "interrupt"
)

// Worktree asks for a session that works in a git worktree of its own, on
// a new branch of the repository at SessionConfig.Cwd, so that sessions
// on one repository do not step on each other. The worktree is added
// where the agent runs (on its SSH host for an agent launched over SSH)
// before the session is created, and the session's cwd is the worktree's
// directory for Cwd (its top, or the same subdirectory). The user's own
// checkout is left as it is: its HEAD, index, stash and files; git's
// worktree list and the new branch are the only changes to the
// repository, and the repository's hooks run as for any git worktree add.
//
// The record keeps the worktree (Record.Worktree): the session reopened
// under its Key works in it again (its Worktree option is not applied a
// second time), and Session.Delete or Host.DeleteSession removes it,
// keeping the branch unless DeleteBranch. A worktree with changes not
// committed to its branch is not removed: the delete fails, saying so,
// with the session closed and its record kept, to delete again once the
// changes are committed or discarded. A fork (Session.Fork) works in its
// parent's worktree and never removes it, unless ForkOptions.Worktree
// gives it one of its own.
type Worktree struct {
	// Branch is the new branch; "" means acphost/KEY, KEY the session's
	// key. A branch that exists is refused.
	Branch string `json:"branch"`
	// Base is the commit the branch starts at (a branch name, tag or
	// hash); "" means the repository's HEAD, and then a repository with
	// uncommitted changes to tracked files is refused, since the worktree
	// would not have them: commit them, or name the commit ("HEAD") to
	// start from it anyway.
	Base string `json:"base,omitempty"`
	// Dir is the worktree's absolute path on the agent's host; it must
	// not exist. "" means
	// ${XDG_DATA_HOME:-~/.local/share}/acphost/worktrees/REPO-HASH/BRANCH.
	Dir string `json:"dir"`
	// DeleteBranch deletes the branch too when the session is deleted.
	DeleteBranch bool `json:"deleteBranch,omitempty"`
	// Repo is the top directory of the repository the worktree was added
	// to; the bridge sets it, in the record.
	Repo string `json:"repo"`
}

// Changes is what a changes event reports about the session's workspace,
// with SessionConfig.Checkpoints set. Op says which of its fields apply:
//
//   - "turn", after turn_end: the files the turn changed, whoever changed
//     them (the agent's own tools, fs/* calls, terminals), From the
//     checkpoint before the turn and To the one at its end, and what the
//     checkpoints left out (Skipped).
//   - "write", as an fs/write_text_file is done: Path (absolute, as the
//     agent gave it), the text before (OldText, or Created for a new file)
//     and after (NewText). Both texts are left out when one is over 256
//     KiB or the old one could not be read as text; the turn's event
//     lists the file either way.
//   - "restore", after Session.Restore, RevertFile or RestoreCheckpoint:
//     the files the restore changed, Restored the turn whose start it went
//     back to (0 for RestoreCheckpoint), From the checkpoint recorded just
//     before it (RestoreCheckpoint(From) undoes it) and To the one after.
//   - "touch", while a turn runs: the files it touched since the last
//     such event (Status "A" created, "M" modified, "D" removed; no line
//     counts), at most one event every 250ms, the last before the turn's
//     event. They let a UI follow along; the turn's event is the record.
//     They come from the host's file notifications: fsnotify locally,
//     inotifywait(1) on an SSH host that has it (see checkpoint's
//     Store.Watch). Skipped, with Path ".", says why live reports
//     stopped or are missing (no watcher on the host, more directories
//     than Options.MaxWatchedDirs) or that an event left files out.
//     Options.MaxWatchedDirs < 0 turns them off.
//
// Checkpoints are IDs of package checkpoint's Store; the event's Turn is
// the turn that changed the files (0 for a restore).
type Changes struct {
	Op       string               `json:"op"`
	From     string               `json:"from,omitempty"`
	To       string               `json:"to,omitempty"`
	Files    []checkpoint.Change  `json:"files,omitempty"`
	Skipped  []checkpoint.Skipped `json:"skipped,omitempty"`
	Path     string               `json:"path,omitempty"`
	OldText  string               `json:"oldText,omitempty"`
	NewText  string               `json:"newText,omitempty"`
	Created  bool                 `json:"created,omitempty"`
	Restored uint64               `json:"restored,omitempty"`
}

// ToolCall is the merged state of one tool call. Each tool event carries a
// snapshot; one tool call id always maps to one row.
type ToolCall struct {
	ID     string `json:"id"`
	Title  string `json:"title,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Status string `json:"status,omitempty"` // pending, in_progress, completed, failed, cancelled
	// Name is the tool's machine name: a provider's own metadata first, then
	// the ACP name field, then (for providers with ToolNameFromTitle) a
	// title that is a bare tool name.
	Name string `json:"name,omitempty"`
	// Parent is the id of the tool call this one runs under, such as the
	// task that started the subagent making it, when the agent says
	// (Provider.ToolParent), so that a UI can nest it there. Once known,
	// it stays: updates that leave it out do not clear it.
	Parent    string                       `json:"parent,omitempty"`
	Content   []acpclient.ToolCallContent  `json:"content,omitempty"`
	Locations []acpclient.ToolCallLocation `json:"locations,omitempty"`
	RawInput  json.RawMessage              `json:"rawInput,omitempty"`
	RawOutput json.RawMessage              `json:"rawOutput,omitempty"`
	Meta      json.RawMessage              `json:"_meta,omitempty"`

	nameFromTitle bool // Name was read from Title and yields to a real name
}

// ToolUnfinished is the status a tool row gets when its turn ended while the
// agent had not finished it (after a reject, a cancel, a failure): the row
// is closed, and updates that still arrive for it are delivered Late.
const ToolUnfinished = "unfinished"
