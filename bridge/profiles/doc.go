// Package profiles is the registry of the built-in agent profiles (Lookup,
// All) and holds the plain ACP agents as data: Claude Code's and Codex's
// ACP adapters, Gemini CLI, OpenCode, Qwen Code and GitHub Copilot CLI.
// Agents with vendor semantics of their own have a package each, which the
// registry lists too: crewcoder, kiro and codey.
//
// A profile is a *bridge.Profile; start one with bridge.Host.StartProfile.
// The vendor packages import only bridge and acpclient, never this one, so
// an app that wants a single vendor imports just that package, and a
// third-party profile is written the same way.
package profiles
