package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/acphost/acphost/acpclient"
)

// Sign-in requests: what an auth_required event carries and how the app
// answers it. auth.go carries the sign-in out.

// ErrAuthRequired is wrapped by the error of a call that failed because the
// agent needs a sign-in the app did not (or could not) provide.
var ErrAuthRequired = errors.New("sign-in required")

// ErrAuthDeclined is wrapped when the app declined an AuthRequest.
var ErrAuthDeclined = errors.New("bridge: sign-in declined")

// ErrAuthUndeclaredEnv is returned when an AuthAnswer sets environment
// variables its env_var method does not list; the error names them.
var ErrAuthUndeclaredEnv = errors.New("bridge: sign-in answer sets variables the method does not declare")

// Auth method types an AuthOption can have.
const (
	// AuthTypeAgent: the agent signs in by itself (browser, cached token);
	// answer with the method id.
	AuthTypeAgent = "agent"
	// AuthTypeEnvVar: the agent reads credentials from environment
	// variables (Vars); answer with their values in AuthAnswer.Env. The
	// bridge restarts the agent with them.
	AuthTypeEnvVar = "env_var"
	// AuthTypeTerminal: the agent's own login command must run in a
	// terminal (Command, Args); the bridge runs it through
	// Config.TerminalLogin and restarts the agent.
	AuthTypeTerminal = "terminal"
)

// AuthOption is one way to sign in that the bridge can carry out.
type AuthOption struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Type is AuthTypeAgent, AuthTypeEnvVar or AuthTypeTerminal.
	Type string `json:"type"`
	// Vars are the environment variables an env_var method asks for.
	Vars []acpclient.AuthVar `json:"vars,omitempty"`
	// Link is where the user gets a key (env_var methods).
	Link string `json:"link,omitempty"`
	// Command, Args and Env are the login command of a terminal method.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// AuthAnswer is the app's answer to an AuthRequest.
type AuthAnswer struct {
	// MethodID is the id of one of the request's Methods.
	MethodID string
	// Env holds the values of an env_var method's variables, and only
	// those: a name the method does not list is refused
	// (ErrAuthUndeclaredEnv). They are secrets: the bridge passes them to
	// the agent's environment only and masks them in every error and log.
	Env map[string]string
	// Meta is sent as authenticate's _meta, for agents that take extra
	// values there.
	Meta json.RawMessage
}

// AuthRequest is an agent's demand to sign in, carried by an auth_required
// event. Answer it (from any goroutine) with one of Methods; the bridge
// signs in and retries the call that failed. Decline, cancelling the call's
// context, cancelling the turn that waits for it, or Bridge.Close fails that
// call with ErrAuthRequired. Done closes on any answer.
type AuthRequest struct {
	userRequest

	// ID identifies the request within its Bridge.
	ID string `json:"id"`
	// Call is the ACP method that failed for want of sign-in.
	Call string `json:"call"`
	// Message is the agent's explanation.
	Message string `json:"message,omitempty"`
	// Methods are the ways to sign in the bridge can carry out; empty when
	// the agent offered none (the user must sign in outside the app).
	Methods []AuthOption `json:"methods"`
	// Withheld names the variables of the app's environment that the
	// agent's lacks and that it may need to sign in (see WithheldEnvError):
	// an app tells its user how to pass them on. Names only.
	Withheld []string `json:"withheld,omitempty"`

	answer AuthAnswer
	// decision is how it was settled, reported by signIn: the sign-in's
	// own goroutine emits the session's events.
	decision Decision
	// refusal is why the sign-in will not happen (ErrAuthDeclined, or the
	// cause of an abandoned request); nil when answered.
	refusal error
}

// TerminalLogin is a login command for Config.TerminalLogin to run in an
// interactive terminal. Env is the complete environment.
type TerminalLogin struct {
	Method  string
	Command string
	Args    []string
	Env     []string
}

// Answer signs in with a method; it returns ErrAlreadyAnswered when the
// request was answered or declined before.
func (r *AuthRequest) Answer(a AuthAnswer) error {
	return r.settle(Decision{Outcome: "signed_in", OptionID: a.MethodID, By: byApp}, a, nil)
}

// Decline refuses to sign in.
func (r *AuthRequest) Decline() error {
	return r.settle(Decision{Outcome: "declined", By: byApp}, AuthAnswer{}, ErrAuthDeclined)
}

// abandon declines with cause. The agent's exit leaves a sign-in waiting
// when a method restarts the agent anyway (see awaitWhileUsable).
func (r *AuthRequest) abandon(cause error) {
	if !errors.Is(cause, errAgentExited) {
		r.settle(hostDecision("declined", cause), AuthAnswer{}, cause)
	}
}

// awaitWhileUsable waits for the answer. When every method offered is
// carried out by the agent that asked (conn), its end ends the wait at once,
// declined with its exit error: no answer could be carried out any more.
// A method that starts the agent again (variables, a login command) keeps
// the request waiting through the agent's exit.
func (r *AuthRequest) awaitWhileUsable(conn *acpclient.Conn) {
	if slices.ContainsFunc(r.Methods, func(m AuthOption) bool { return m.Type != AuthTypeAgent }) {
		<-r.Done()
		return
	}
	select {
	case <-r.Done():
	case <-conn.Done():
		cause := fmt.Errorf("%w: %w", errAgentExited, conn.Err())
		r.settle(hostDecision("declined", cause), AuthAnswer{}, cause)
	}
}

func (r *AuthRequest) settle(d Decision, a AuthAnswer, refusal error) error {
	d.Request, d.Type = r.ID, "auth"
	return r.userRequest.settle(d, func() { r.answer, r.refusal = a, refusal })
}

func (r *AuthRequest) method(id string) (AuthOption, bool) {
	for _, m := range r.Methods {
		if m.ID == id {
			return m, true
		}
	}
	return AuthOption{}, false
}
