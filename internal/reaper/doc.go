// Package reaper is the small helper that acpclient runs each local command
// under on Linux, so that every process the command starts is ended with
// it, however it got away from the command (setsid, a double fork, a
// daemon whose parent exited at once).
//
// The helper is this program itself, run again through /proc/self/exe with
// the variable Env set: the init function of this package, which every
// program importing acpclient links, recognises it and runs the helper
// instead of the program; any other start of the program returns from init
// at once, having read one variable. So no binary of ours has to be
// installed, and a test binary works as well as an app.
//
// The helper makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER):
// every orphan in the command's tree is re-parented to it rather than to
// init, so its descendants are always its children or theirs, whatever
// they did, and nothing depends on seeing them in time. It starts the
// command (in a process group of its own, with a parent-death signal), and
// reports on descriptor StatusFD, one line each:
//
//	pid N          the command runs as process N
//	error ERRNO M  the command could not be started (errno ERRNO, message M)
//	uncontained M  the helper cannot be a subreaper here (why: M)
//	status W       the command's raw wait status, once its tree is gone
//
// When the command exits, or the helper receives SIGTERM, SIGINT, SIGHUP
// or SIGQUIT (the app's Kill, or the parent-death signal the app starts it
// with), it kills the command and then, round after round, each of its own
// children (SIGKILL), reaping them, until it has none left: children of a
// killed process become its own children, so the rounds reach the whole
// tree. Then it reports the status and exits.
package reaper

// Env is the variable that makes a program act as the helper; its value
// must be Value.
const Env = "ACPHOST_REAPER"

// Value is Env's value.
const Value = "1"

// StatusFD is the descriptor the helper reports on: the app's first extra
// file.
const StatusFD = 3

// Arg0 is the helper's argv[0], so that ps shows what it is; the command's
// path and arguments follow.
const Arg0 = "acphost-reaper"
