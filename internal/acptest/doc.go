// Package acptest is a scriptable fake ACP agent: the agent side of the
// wire, driven by a Script, for testing the client library through normal
// paths and faults.
//
// It deliberately imports nothing else from this module and speaks raw JSON
// itself, so a bug in the client's protocol types cannot hide behind the
// same bug in the fake.
//
// Two ways to run it:
//
//   - In process: NewAgent(script).Serve(ctx, r, w), or Pipe(t, script),
//     which serves on an in-memory connection and returns the client's end.
//     Agent.Received and Agent.WaitFor show what the agent got.
//   - As a process: BuildBinary(t) builds cmd/fakeagent once per test
//     process; run it with -script WriteScript(t, script) and optionally
//     -record PATH, then ReadRecord(PATH).
//
// What a script can do, in short: answer initialize, session/new (with
// updates before the answer, or auth_required until authenticate),
// session/load (replay, unknown ids), any other method from a canned table,
// and prompts with a list of steps: updates, notifications, requests to the
// client (permission with branches, fs, terminal), sleeps, junk and raw
// lines, huge lines, stderr, stray responses, exit, hang, and waiting for
// session/cancel. Steps that ask the client something report the answer as
// an agent_message_chunk ("permission: selected allow"), so tests see the
// outcome in the update stream.
//
// Concurrency: the agent keeps reading while requests are handled (each on
// its own goroutine), so it sees cancels and the answers to its own requests,
// and turns of different sessions run at the same time. Every message it
// writes is one compact JSON line, except the deliberate Junk, Raw and Huge
// steps (Huge is valid JSON, just large).
package acptest
