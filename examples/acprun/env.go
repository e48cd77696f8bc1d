package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/examples/internal/envflags"
)

// envFlags collects the repeatable --env: NAME (or a prefix ending in "*")
// passes that variable on from acprun's environment, NAME=VALUE sets it.
type envFlags = envflags.List

// agentEnv is the environment of a local agent: the minimal one
// (acpclient.MinimalEnv of environ, with the profile's vendor variables and
// the names --env passes on), or all of environ with --env-all; then the
// variables --env sets, over it.
func agentEnv(o *options, environ, vendor []string) []string {
	if o.envAll {
		_, set := o.env.Split()
		return envflags.SetVars(environ, set)
	}
	return o.env.Local(environ, vendor)
}

// remoteEnv is what acprun sets for an agent on an SSH host, whose
// environment is otherwise the SSH server's: the variables --env passes on
// from acprun's environment and those it sets.
func remoteEnv(o *options, environ []string) []string {
	return o.env.Remote(environ)
}

// withheldHint tells the user how to pass on the variables the agent's
// minimal environment left out, when a sign-in or start failed without
// them: names only.
func withheldHint(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("; the agent did not get %s (acprun passes a minimal environment): add %s",
		strings.Join(names, ", "), envflags.Flags(names))
}

// errWithheldHint is withheldHint for the variables a failure names
// (bridge.WithheldEnvError).
func errWithheldHint(err error) string {
	// The error names them already; what to do is left to say.
	if we, ok := errors.AsType[*bridge.WithheldEnvError](err); ok {
		return "; pass them on with " + envflags.Flags(we.Names)
	}
	return ""
}
