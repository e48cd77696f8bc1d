// Package profiles is the registry of the built-in agent profiles (Lookup,
// All) and holds the plain ACP agents as data: Claude Code's and Codex's
// ACP adapters, Gemini CLI, OpenCode, Qwen Code and GitHub Copilot CLI.
// Agents with vendor semantics of their own have a package each, which the
// registry lists too: crewcoder, kiro and codey.
//
// Every built-in profile carries its agent's mode table (bridge.ModeTable
// in Profile.Modes): which of the agent's own modes and config options let
// it act without asking, which only plan, which ask, and which launch flags
// escalate. The tables of the plain agents were learned by probing each
// real agent offline (its session/new answers are kept in testdata/ and a
// test checks every table against them); those of CrewCoder, Codey and
// Kiro come from their documentation, as their Source says.
//
// A profile is a *bridge.Profile; start one with bridge.Host.StartProfile.
// The vendor packages import only bridge and acpclient, never this one, so
// an app that wants a single vendor imports just that package, and a
// third-party profile is written the same way.
package profiles
