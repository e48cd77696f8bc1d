// Package envflags is the examples' repeatable --env flag, the same in
// every example: NAME (or a prefix ending in "*") passes that variable on
// from the program's environment to a local agent's minimal one,
// NAME=VALUE sets it.
package envflags

import (
	"fmt"
	"slices"
	"strings"

	"github.com/acphost/acphost/acpclient"
)

// List collects the --env values; it is a flag.Value.
type List []string

// String returns the values as given.
func (e *List) String() string { return strings.Join(*e, " ") }

// Set adds one value: NAME, PREFIX* or NAME=VALUE.
func (e *List) Set(v string) error {
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

// Split returns the names and prefixes to pass on, and the variables to
// set ("NAME=VALUE").
func (e List) Split() (names, set []string) {
	for _, v := range e {
		if strings.Contains(v, "=") {
			set = append(set, v)
		} else {
			names = append(names, v)
		}
	}
	return names, set
}

// Local is the environment of a local agent: the minimal one
// (acpclient.MinimalEnv of environ, with vendor's variables and the names
// the list passes on), then the variables it sets, over it.
func (e List) Local(environ, vendor []string) []string {
	names, set := e.Split()
	return SetVars(acpclient.MinimalEnv(environ, slices.Concat(vendor, names)...), set)
}

// Remote is what to set for an agent on an SSH host, whose environment is
// otherwise the SSH server's: the variables the list passes on from
// environ and those it sets.
func (e List) Remote(environ []string) []string {
	names, set := e.Split()
	return SetVars(acpclient.FilterEnv(environ, names...), set)
}

// SetVars sets the "NAME=value" entries of set in env: a name env has
// already is replaced where it stands, the others are appended.
func SetVars(env, set []string) []string {
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

// Flags is the --env flags that pass names on: "--env A --env B".
func Flags(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return "--env " + strings.Join(names, " --env ")
}
