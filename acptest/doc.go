// Package acptest is a scriptable fake ACP agent for tests, in the spirit of
// net/http/httptest: an app tests its event handling against it instead of
// a real agent, and this module tests its client through normal paths and
// faults. A Script says how the agent behaves; the agent speaks the agent
// side of the wire.
//
// It deliberately imports nothing else from this module and speaks raw JSON
// itself, so a bug in the client's protocol types cannot hide behind the
// same bug in the fake.
//
// Three ways to run it:
//
//   - As a transport: &Transport{Script: script} is an acpclient.Transport
//     whose every Connect starts a fresh agent in process, on an in-memory
//     connection, so it can be a bridge.Config's Transport, restarts
//     included. Transport.Agents shows what each agent received.
//   - On streams you own: NewAgent(script).Serve(ctx, r, w), for tests that
//     write the client's lines themselves. Agent.Received and Agent.WaitFor
//     show what the agent got.
//   - As a process, for tests of process handling (exit codes, stderr,
//     signals, a program found on PATH): BuildBinary(t) builds cmd/fakeagent
//     once per test process; run it with -script WriteScript(t, script) and
//     optionally -record PATH, then ReadRecord(PATH). It works from another
//     module that requires this one.
//
// What a script can do, in short: answer initialize, session/new (with
// updates before the answer, or auth_required until authenticate),
// session/load (replay, unknown ids), session/fork where the script's
// capabilities advertise it, any other method from a canned table,
// and prompts with a list of steps: updates, notifications, requests to the
// client (permission with branches, fs, terminal), sleeps, junk and raw
// lines, huge lines, stderr, stray responses, exit, hang, and waiting for
// session/cancel; and steering of a running turn in each wire form
// (SteeringScript: the draft's session/inject, the _session/steering
// extension, a session/follow_up vendor method), advertised, performed
// and, if the script says so, failed. Steps that ask the client something report the answer as
// an agent_message_chunk ("permission: selected allow"), so tests see the
// outcome in the update stream.
//
// Concurrency: the agent keeps reading while requests are handled (each on
// its own goroutine), so it sees cancels and the answers to its own requests,
// and turns of different sessions run at the same time. Every message it
// writes is one compact JSON line, except the deliberate Junk, Raw and Huge
// steps (Huge is valid JSON, just large).
package acptest
