// Package acpclient is the wire layer of acphost: everything a host needs to
// speak the Agent Client Protocol (ACP) v1 to an agent over newline-delimited
// JSON-RPC 2.0, and nothing about apps.
//
// A Conn runs one connection. Its typed methods (Initialize, NewSession,
// LoadSession, Prompt, Cancel, SetMode, SetConfigOption, …) send the
// client→agent calls, refusing before sending anything the agent did not
// advertise; Call and Notify carry vendor methods. A Client, which the host
// implements, serves the agent→client side; the optional interfaces
// TextFileReader, TextFileWriter, Terminals, Elicitations and
// ExtensionHandler add the rest, and Initialize advertises exactly what the
// Client implements. A Transport yields the byte stream: CommandTransport for
// a local process, SSHTransport for a command on an SSH host (its process
// tree ends with the connection), WebSocketTransport and HTTPTransport for
// an agent that runs as a service (the two profiles of ACP's remote
// transport draft, WebSocket and Streamable HTTP, as the official
// TypeScript SDK speaks them; each Connect reconnects; over Streamable HTTP
// a session's messages and the connection's come on separate streams, so
// the order holds within each, not across them), IOTransport for any stream,
// NewInMemoryTransports for a pair of connected in-memory ends; package
// acptest has a fake agent to test against. CommandTransport.Start and
// SSHTransport.Start run a command whose output is read as it runs (the
// terminals a host serves), with the same guarantees as an agent's process.
//
// # Why it is built this way
//
// Ordering. Everything the agent sends goes through one ordered queue to a
// single dispatch goroutine, so a host sees updates, permission requests and
// the answer to its prompt in the agent's order. The read loop never waits on
// the host: requests that wait for a person (permission, elicitation) or a
// process (terminal exit) get a reply function to call later, and so does
// terminal/create for a Terminals that is a TerminalStarter (a start on an
// SSH host takes round trips). File calls
// (fs/read_text_file, fs/write_text_file) are served off the dispatch
// goroutine, so a slow file root (SFTP) does not hold up updates; they run
// one at a time in the agent's order (a read after a write sees the write),
// on one goroutine per connection at most. When a call
// such as Prompt returns, every message the agent sent before its answer has
// been delivered, file calls answered included; PromptThen goes further and runs a hook at the answer's
// exact place in the stream, so a host can end its turn there. The queue has
// a byte budget: a host that falls behind slows the agent down (it blocks on
// its stdout) and loses nothing.
//
// Throughput. A Client receives updates one way only, through
// SessionUpdate, as plain notifications it may keep. Fast decoding is
// internal: a streaming agent sends mostly message chunks, each decoded in
// one pass by a hand-written scanner into one allocation, and the read
// loop hands the notifications of lines it already holds in its buffer to
// the queue together (up to 16 or 16 KiB), under one lock, one charge to
// the budgets and one wake-up of the dispatcher; a request or an answer
// ends such a batch and goes at once, and a batch is handed over before
// the loop may wait on the agent, so nothing waits for input that may not
// come. After a batch had to wait for room (the host is behind) messages
// go one at a time for a while: a batch held back is memory the budgets do
// not yet count. The bridge package, through an interface of this module's
// internal/wire that code outside the module cannot implement, also takes
// queued updates in runs (consecutive pieces of one session's streamed
// messages, or one other update; a panic in it costs that run alone),
// plain text chunks among them as lean deltas of a few strings, and the
// raw bytes of the other updates. The scanner, its shapes, slabs and box
// pool live in internal/wire/scan; this package only turns what it
// decodes into notifications and deltas.
//
// Built with the plainwire tag, the package decodes every line with
// encoding/json instead (no scanner, no shapes, no deltas): the test suite
// runs both ways, so the fast path cannot change what a host sees.
//
// Robustness. A line that is not JSON, is truncated, is not a JSON-RPC
// message or answers nobody costs that one line: it is reported through
// ConnOptions.OnBadLine and skipped. A malformed request whose id and
// method a token scan of its top level recovers (and that has no result or
// error key, so it is not a response) is also answered: -32700 when it is
// not JSON, -32600 when it is JSON of the wrong shape, so the agent is not
// left waiting; a response or an id-less line is never answered. Only a
// closed stream or a line over MaxLineBytes (default 256 MiB) ends a Conn,
// and Err says why; for a process that died it wraps an *ExitError quoting
// the redacted tail of its stderr.
// Unions decode leniently: an unknown update kind, content type, tool content
// or config option type is kept as raw JSON, never misread as another
// variant, and a malformed optional field falls back to its zero value.
//
// Files. fs/read_text_file answers carry text as a JSON string, and
// encoding/json would replace bytes that are not UTF-8 with U+FFFD: the
// TextFileReader is to refuse such text rather than hand the agent altered
// text it might save back (fsroot's roots do, naming the path and the
// offset). Write content whose JSON string is not valid Unicode is refused
// by the Conn (-32602), as decoding it would alter it. Memory for
// fs/write_text_file stays near twice the line: a long line is assembled in
// chunks and joined once, its params are not copied again, the content is
// measured before it is decoded, so a TextFileWriteLimiter's cap refuses a
// larger write (-32602) without decoding it, and an accepted one is decoded
// into one string of exactly its size.
//
// Processes. An agent started by CommandTransport runs in a process group of
// its own. Close, and equally the end of the agent's stdout or a line over
// the cap, runs one stop sequence: stdin closed, StopTimeout of grace,
// SIGTERM to the group, KillTimeout, SIGKILL. Close returns and Done closes
// only when the agent has exited and been reaped, whichever came first. When
// the agent exits while something it left behind still holds its stdout,
// the stream ends ExitDrain later (what the pipe holds is still read) with
// the usual *ExitError.
//
// A host that dies without closing the agent (SIGKILL, a crash, a panic)
// runs no stop sequence, so on every Unix each agent has a sentinel: a
// /bin/sh that joins the agent's process group, ignores the signals that
// can be (SIGHUP, SIGINT, SIGTERM, SIGUSR1, the terminal stop signals, …;
// not SIGKILL, which ends the whole group anyway), and waits on a pipe whose
// write end only the host holds (close-on-exec, so no agent or other child
// keeps it past its exec). When the host dies the kernel closes that end;
// the sentinel reads EOF and kills its own group, the agent's, with
// SIGKILL. It sits inside the group rather than beside it because a group
// id is a pid number that is not handed out again while the group has a
// member (POSIX requires it): "kill my own group" can never reach an unrelated group that
// reused the number, which "kill group N" from outside could once everything
// in the group had died. Being outside the host's group, it is not reached
// by a terminal's Ctrl-C, which goes to the foreground group (the host then
// does its own handling; if it dies of it, the sentinel acts). A normal stop
// never closes its stdin: the SIGKILL the group gets (when the agent has
// exited, or as the last step of the stop sequence) ends it with the rest,
// the host kills it again by pid to be sure, and it is reaped before Close
// returns and Done closes. A sentinel that dies early (someone kills it)
// takes only this protection with it; the agent is left alone. Its cost is
// one process per agent: with dash as /bin/sh, a VmRSS of about 1.7 MB, of
// which about 100 kB is its own (the rest is the shell and libc, shared
// with every other sh; PSS about 400 kB). CommandTransport.NoSentinel leaves
// it out; without /bin/sh there is none (Connect goes on, and logs a warning
// through CommandTransport.Logger).
//
// What each platform adds:
//
//   - Linux: the agent gets SIGKILL as its parent-death signal, so it dies
//     with the host at once, without waiting for the sentinel. SIGKILL
//     because nobody is left to escalate: an agent that ignores SIGTERM would
//     survive it, and a graceful one sees stdin end at the same moment. The
//     kernel sends it when the forking thread ends, not the process, so
//     agents are forked from one goroutine locked to its own thread for as
//     long as any of them runs. A parent that dies between fork and prctl is
//     caught by the syscall package, which rechecks getppid in the child.
//     The sentinel gets no parent-death signal (it would die before acting).
//     Descendants that leave the group (setsid, daemons) are found by walking
//     /proc (parent links) every DescendantScan while the agent runs (one
//     scan per interval serves every agent of the process) and again when
//     the stop begins (stops under way at once share their scans); the stop ends each recorded one still
//     alive, checking its start time (field 22 of /proc/PID/stat) through a
//     pidfd so that a reused pid is never signalled. One scan costs about
//     6–10 µs per process on the machine (0.5 ms with 80 processes, 6 ms
//     with 580), hence the 1 s default, paid once per second however many
//     agents run.
//   - Other Unix systems (macOS, the BSDs): the process group, the sentinel
//     (which is what ends the agent itself when the host dies) and the exit
//     drain. Descendants that leave the group outlive the agent.
//   - Windows: the stop kills only the agent process itself, and what it
//     started survives; a host that dies without closing the agent leaves it
//     running; the exit drain does not apply (pipes have no deadlines).
//
// What agents get per platform, in short: on Linux an agent runs under a
// reaper of its own, as a terminal command does (see below), so that
// everything it starts, a daemon it orphaned at once included, ends with its
// Close, its own exit or the host's death; the stop sequence is unchanged
// (stdin closed, then SIGTERM to the agent's own group, then the reaper
// kills the tree), and the group, sentinel and DescendantScan described
// above are what it gets only where the reaper cannot be started (logged
// through CommandTransport.Logger). Other Unix systems get the group and the
// sentinel, Windows the agent process alone. An agent on an SSH host runs
// under the remote reaper where the host is Linux with python3 (see
// SSHTransport); elsewhere a daemon it starts survives it.
//
// Limits, stated rather than hidden. Without a reaper (the rest of this
// paragraph), when the host dies suddenly, only the
// agent's process group is ended: descendants that left it (setsid, the jobs
// of a job-control shell, daemons) survive on every platform. The recorded
// descendants live in the host's memory and die with it; handing their pids
// to the sentinel would not be sound, since a shell cannot check that a pid
// still names the process recorded (no pidfd) and could kill an unrelated
// process that reused it. An agent is unguarded from its start until its
// sentinel has joined its group (one fork and exec, about a millisecond)
// and until the sentinel's shell has set its traps; a host that dies then,
// or an agent that signals its group in that instant, leaves what it started
// running (on Linux the agent itself still dies). A program forked by
// non-Go code in the host that does not exec keeps the sentinel's pipe open
// and so delays it until that program ends. On Linux, a descendant whose link
// to the agent breaks between two samples (a double fork whose middle
// process exits at once, or anything an agent starts just before it exits on
// its own) is never recorded and escapes a normal stop too. A program that
// gains privileges (setuid) may refuse our signals, the sentinel's included,
// and loses the parent-death signal. Making the host itself a child
// subreaper would change who reaps orphans for the whole program and steal
// os/exec's exit statuses; the reaper below is a process of its own.
//
// Terminal commands (CommandTransport.Start) on Linux run under a reaper of
// their own, so that no process they start outlives them, however it got
// away: a command that starts a daemon (setsid) and exits at once leaves
// nothing running. The reaper is this program run again through
// /proc/self/exe (package internal/reaper recognises it in an init
// function, before main; nothing has to be installed, and a test binary
// works too). It makes itself a child subreaper (PR_SET_CHILD_SUBREAPER),
// so every orphan in the command's tree is re-parented to it instead of to
// init, starts the command in a process group of its own with SIGKILL as
// its parent-death signal, and reaps. When the command exits, is killed
// (Kill, Close: the host sends the reaper SIGTERM) or the host dies (the
// reaper's parent-death signal is SIGTERM), it kills its children with
// SIGKILL and reaps them, round after round (a killed process's children
// become its own), until it has none, then reports the command's exit
// status. Nothing is sampled, so nothing depends on catching a process in
// time, and only unreaped children are signalled, so no pid can have been
// reused. Its cost is one more fork and exec of this program per command
// (the Go runtime's start and the package init functions) and, while the
// command runs, a process of about 1.2 MB of private memory (PSS about
// 3.8 MB, 7 threads), but no /proc scan: BenchmarkStartRelease, start to
// release of /bin/true, measured 40–57 ms against 16–23 ms for the
// sentinel's path on a 2-core machine under a load of 11 (about 25–35 ms
// more per command, mostly the runtime's start). What escapes it: a
// process that is itself made a subreaper's child elsewhere (impossible
// without privileges), one that gains privileges (setuid) and refuses our
// signals, and everything if the reaper itself is killed with SIGKILL (the
// command then dies of its parent-death signal, its descendants are left).
// A Go library built into another program (build mode c-shared or
// c-archive) cannot run itself as the reaper: its commands run without
// one. Where no reaper
// runs (other platforms; Linux when it cannot be started) Start uses the
// agents' means (sentinel, DescendantScan on Linux) and
// RunningCommand.Uncontained says why the command's processes cannot all
// be accounted for. Agents (Connect) run under the same reaper: it reports
// the agent's pid, which is also its group id, so the stop's SIGTERM still
// reaches the agent's group, sent only while the reaper is unreaped; the
// agent's exit error is the status the reaper reports, in os/exec's words,
// and its stderr is its own (the reaper keeps no copy). An agent pays the
// same one more start of this program, and saves its sentinel and its
// share of the /proc scans: BenchmarkConnectClose, Connect to the end of
// Close of /bin/cat, measured 20–21 ms against 7–9 ms without the reaper
// on a 2-core machine under a load of 1.
//
// Speed. Streamed text is most of what an agent sends. Lines carrying a
// message chunk are decoded by a single-pass scanner that walks the bytes
// once (it is fuzzed against encoding/json for identical results, and hands
// anything unusual to the general decoder), which makes delivering a chunk
// through a Conn faster than a bare json.Unmarshal of the JSON-RPC envelope.
// Tool calls and their updates, most of a replayed session's bytes, are
// decoded in one pass with github.com/go-json-experiment/json in its strict
// mode; a line it refuses takes the general decoder (see toolline.go).
//
// The JSON-RPC layer is this package's own (read.go, outcalls.go): one read
// goroutine classifies every line, settles the answers to our calls and
// queues the rest in arrival order. The design names
// github.com/sourcegraph/jsonrpc2; we measured it again behind this package
// (its Conn reading through our line reader as its ObjectStream, correlating
// our calls) and kept our own. It can carry only our calls: the agent's
// requests must stay on our path, because decoding a request into its
// generic form costs 260–290 MB for a 16 MiB fs/write_text_file line where
// ours takes 73 MB (the queue's bound is about twice the line), and its
// handler cannot keep requests and notifications in one order. For calls
// alone it cost what a user of many agents sees: one more goroutine per
// connection (an idle bridge 5 → 6 goroutines), 12 → 20 KB of stack per idle
// connection (BenchmarkIdleConn), a prompt's round trip 8–10 → 17–20 µs with
// 38 → 97 allocations (BenchmarkPromptRoundTrip), a cancel racing its answer
// settled at random, and 81 more lines than the call table it replaced.
package acpclient
