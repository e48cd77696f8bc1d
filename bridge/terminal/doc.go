// Package terminal runs the commands an agent asks its client for through
// terminal/* (create, output, wait_for_exit, kill, release), for the
// bridge (bridge.Config.Terminals takes its Options).
//
// A Runner starts each command where the agent's files are: Local on this
// machine, SSH on an SSH host (its directories resolved over one shared
// SFTP session). A Set holds the running terminals: it keeps the end of
// each command's output within a byte window, at a UTF-8 boundary; streams
// it live as Output events at a bounded rate; and ends each terminal with
// its command, its release, its Owner (session, agent process) or the set.
//
// What is the bridge's, not this package's: the session's policy and the
// confinement of a terminal's cwd to the session's roots (Set.Create takes
// the directory from the caller), and which tool row shows a terminal
// (Owner.Row): the set asks, and when a row first names a terminal whose
// output went out without one (Set.Placed), it sends that output again,
// Reset, for the row.
package terminal
