package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/acphost/acphost/acpclient"
)

// envFlags collects the repeatable --env: NAME (or a prefix ending in "*")
// passes that variable on from acprun's environment, NAME=VALUE sets it.
type envFlags []string

func (e *envFlags) String() string { return strings.Join(*e, " ") }

func (e *envFlags) Set(v string) error {
	name, _, hasValue := strings.Cut(v, "=")
	pattern := strings.TrimSuffix(name, "*")
	switch {
	case pattern == "" || strings.ContainsAny(pattern, " \t\n*"):
		return fmt.Errorf("%q: want NAME, PREFIX* or NAME=VALUE", v)
	case hasValue && pattern != name:
		return fmt.Errorf("%q: a prefix* cannot take a value", v)
	}
	*e = append(*e, v)
	return nil
}

// split returns the names and prefixes to pass on, and the variables to set.
func (e envFlags) split() (names, set []string) {
	for _, v := range e {
		if strings.Contains(v, "=") {
			set = append(set, v)
		} else {
			names = append(names, v)
		}
	}
	return names, set
}

// agentEnv is the environment of a local agent: the minimal one
// (acpclient.MinimalEnv of environ, with the profile's vendor variables and
// the names --env passes on), or all of environ with --env-all; then the
// variables --env sets, over it.
func agentEnv(o *options, environ, vendor []string) []string {
	names, set := o.env.split()
	env := environ
	if !o.envAll {
		env = acpclient.MinimalEnv(environ, slices.Concat(vendor, names)...)
	}
	return setVars(env, set)
}

// remoteEnv is what acprun sets for an agent on an SSH host, whose
// environment is otherwise the SSH server's: the variables --env passes on
// from acprun's environment and those it sets.
func remoteEnv(o *options, environ []string) []string {
	names, set := o.env.split()
	return setVars(acpclient.FilterEnv(environ, names...), set)
}

// setVars sets the "NAME=value" entries of set in env: a name env has
// already is replaced where it stands, the others are appended.
func setVars(env, set []string) []string {
	out := slices.Clone(env)
	for _, kv := range set {
		name, _, _ := strings.Cut(kv, "=")
		i := slices.IndexFunc(out, func(e string) bool { return strings.HasPrefix(e, name+"=") })
		if i >= 0 {
			out[i] = kv
		} else {
			out = append(out, kv)
		}
	}
	return out
}
