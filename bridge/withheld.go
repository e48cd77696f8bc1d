package bridge

import (
	"fmt"
	"slices"
	"strings"
)

// WithheldEnvError is wrapped by the error of a failed start or sign-in
// when the agent ran in an environment given to it (LaunchOptions.Env,
// CommandTransport.Env: a minimal one, typically) that left out variables
// of the app's own that look like credentials: a key the user exported
// that never reached the agent is the likely cause. Names are the
// variables' names, never their values; an app says how its user passes
// them on (acprun: --env NAME).
type WithheldEnvError struct {
	Names []string
	Err   error
}

func (e *WithheldEnvError) Error() string {
	return fmt.Sprintf("%v (the agent's environment left out %s, which this program has)", e.Err, strings.Join(e.Names, ", "))
}

func (e *WithheldEnvError) Unwrap() error { return e.Err }

// withheld returns what the agent's environment left out of the app's
// that may have made it fail: the variables the sign-in methods declare
// when the app has any of them, else every one that looks like a
// credential (withheldCredentials). An agent given no
// environment of its own has the app's, and nothing withheld.
func (b *Bridge) withheld(methods []AuthOption) []string {
	app := environ()
	env := b.launchEnv()
	var declared []string
	for _, m := range methods {
		for _, v := range m.Vars {
			if !slices.Contains(declared, v.Name) && hasVar(app, v.Name) && !hasVar(env, v.Name) {
				declared = append(declared, v.Name)
			}
		}
	}
	if len(declared) > 0 {
		slices.Sort(declared)
		return declared
	}
	return withheldCredentials(app, env)
}

// withWithheld wraps err in a WithheldEnvError when the agent's
// environment left out what it may have needed.
func (b *Bridge) withWithheld(err error, methods []AuthOption) error {
	return withheldErr(b.withheld(methods), err)
}

// withheldErr wraps err in a WithheldEnvError naming names, if any.
func withheldErr(names []string, err error) error {
	if len(names) == 0 {
		return err
	}
	return &WithheldEnvError{Names: names, Err: err}
}

// hasVar reports whether env ("NAME=value" entries) sets name.
func hasVar(env []string, name string) bool {
	return slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
}

// credentialWords are the parts of a variable's name ("_"-separated) that
// make it look like a credential: GEMINI_API_KEY, GITHUB_TOKEN,
// AWS_SECRET_ACCESS_KEY, GOOGLE_APPLICATION_CREDENTIALS. Narrower than
// acpclient's redaction, which would rather mask too much: a hint that
// names KEYMAP or SSH_AUTH_SOCK would mislead.
var credentialWords = []string{"KEY", "KEYS", "APIKEY", "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "CREDENTIAL", "CREDENTIALS"}

// withheldCredentials returns the names of the variables of environ (the
// app's, "NAME=value" entries) that env (the agent's) lacks and whose
// names look like credentials: a part of the name, split at "_", is one
// of credentialWords. Names only, sorted, never values.
func withheldCredentials(environ, env []string) []string {
	var names []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if name == "" || !looksLikeCredential(name) || slices.Contains(names, name) || hasVar(env, name) {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// looksLikeCredential reports whether a variable's name has a credential
// word among its parts.
func looksLikeCredential(name string) bool {
	for part := range strings.SplitSeq(strings.ToUpper(name), "_") {
		if slices.Contains(credentialWords, part) {
			return true
		}
	}
	return false
}

// launchEnv returns the environment the agent runs with: its transport's
// (acpclient.ProgramTransport), else this process's.
func (b *Bridge) launchEnv() []string {
	if _, _, env := b.program(); env != nil {
		return env
	}
	return environ()
}
