package acpclient

import (
	"maps"
	"os"
	"slices"
	"strings"
)

// EnvTransport is a Transport that can start its agent with extra
// environment variables, such as the API key of an env_var sign-in method.
// CommandTransport and SSHTransport implement it; a wrapping transport
// implements it by wrapping the inner transport's copy.
type EnvTransport interface {
	Transport
	// WithEnv returns a copy of the transport whose agent gets vars on top
	// of the environment it would get otherwise. The values are secrets:
	// they are added to the copy's Redactor.
	WithEnv(vars map[string]string) (Transport, error)
}

// WithEnv returns a copy of t whose agent gets vars on top of Env (or of
// this process's environment when Env is nil).
func (t *CommandTransport) WithEnv(vars map[string]string) (Transport, error) {
	cp := *t
	base := t.Env
	if base == nil {
		base = os.Environ()
	}
	cp.Env = setEnv(base, vars)
	cp.Redactor = withSecrets(t.Redactor, vars)
	return &cp, nil
}

// WithEnv returns a copy of t whose agent gets vars on top of Env. Like
// Env, they reach the agent through its stdin, never its command line.
func (t *SSHTransport) WithEnv(vars map[string]string) (Transport, error) {
	cp := *t
	cp.Env = setEnv(slices.Clone(t.Env), vars)
	cp.Redactor = withSecrets(t.Redactor, vars)
	return &cp, nil
}

// setEnv sets vars in env, in name order, replacing earlier entries.
func setEnv(env []string, vars map[string]string) []string {
	out := make([]string, 0, len(env)+len(vars))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if _, replaced := vars[name]; !replaced {
			out = append(out, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		out = append(out, k+"="+vars[k])
	}
	return out
}

// withSecrets returns a new Redactor masking what r masks and the values of
// vars.
func withSecrets(r *Redactor, vars map[string]string) *Redactor {
	red := &Redactor{}
	if r != nil {
		red.Values = append(red.Values, r.Values...)
	}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		red.Values = append(red.Values, vars[k])
	}
	return red
}
