package acpclient

import "slices"

// ProgramTransport is a Transport that starts a program on this machine and
// can say which, so a host can rerun that program (with a terminal sign-in
// method's arguments, in the agent's environment) outside the connection.
// CommandTransport implements it; a wrapping transport implements it by
// forwarding to the transport it wraps, and a transport whose agent does not
// run here (SSHTransport) does not implement it.
type ProgramTransport interface {
	Transport
	// Program returns the program the transport starts, its arguments and
	// its environment (nil: this process's); a path of "" says no program
	// runs here (a wrapper around a remote transport). The caller may
	// modify the slices.
	Program() (path string, args, env []string)
}

// Program returns Path, Args and Env, copied.
func (t *CommandTransport) Program() (path string, args, env []string) {
	return t.Path, slices.Clone(t.Args), slices.Clone(t.Env)
}
