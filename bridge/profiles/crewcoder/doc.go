// Package crewcoder is the profile of CrewCoder ("crewcoder acp"): its
// launch options (an approval policy; its agent profile is the generic
// bridge.LaunchOptions.AgentMode) and the mapping of its vendor protocol
// onto the bridge's Provider hooks: usage and tool identity in _meta, its
// compaction updates, directory grants, reasoning effort, follow-up, native
// compaction, and a task list rebuilt from its Task* tools.
//
// It is written against the exported API of packages bridge and acpclient
// only. Package bridge/profiles lists it with the other built-in profiles.
package crewcoder
