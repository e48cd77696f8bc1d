package acpclient

import (
	"slices"
	"strings"
)

// credentialWords are the parts of a variable's name ("_"-separated) that
// make it look like a credential: GEMINI_API_KEY, GITHUB_TOKEN,
// AWS_SECRET_ACCESS_KEY, GOOGLE_APPLICATION_CREDENTIALS.
var credentialWords = []string{"KEY", "KEYS", "APIKEY", "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "CREDENTIAL", "CREDENTIALS"}

// WithheldCredentials returns the names of the variables of environ (the
// app's, "NAME=value" entries) that env (the agent's) lacks and whose names
// look like credentials: a part of the name, split at "_", is KEY, TOKEN,
// SECRET, PASSWORD or CREDENTIALS (or a plural or APIKEY). These are what a
// minimal environment (MinimalEnv) kept from an agent that may have needed
// one to sign in, for an error to name. Names only, sorted, never values.
func WithheldCredentials(environ, env []string) []string {
	var names []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if name == "" || !looksLikeCredential(name) || slices.Contains(names, name) {
			continue
		}
		if !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, name+"=") }) {
			names = append(names, name)
		}
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
