// Package kiro is the profile of Kiro CLI ("kiro-cli acp"): its launch
// options (MCP tool search; its agent is the generic
// bridge.LaunchOptions.AgentMode), the workspace settings overlay it writes
// before every start, the resume guard over kiro-cli's transcripts, its
// context meter and compaction reports, reasoning effort through its
// /effort command, and the retry of its transient backend errors.
//
// It is written against the exported API of packages bridge and acpclient
// only. Package bridge/profiles lists it with the other built-in profiles.
package kiro
