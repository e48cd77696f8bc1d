package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/acphost/acphost/acpclient"
)

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

// terminalAuthMeta is the _meta["terminal-auth"] some agents attach to an
// auth method: a login command to run in a terminal.
type terminalAuthMeta struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Label   string            `json:"label"`
}

// authOptions returns the sign-in methods the bridge can carry out, from
// the initialize answer and from the failed call's error.data.authMethods
// (agents put them in either place), without duplicates.
func (b *Bridge) authOptions(agent *acpclient.InitializeResponse, cause error) []AuthOption {
	var methods []acpclient.AuthMethod
	if agent != nil {
		methods = append(methods, agent.AuthMethods...)
	}
	if e := errorsAsCall(cause); e != nil && len(e.Data) > 0 {
		var data struct {
			AuthMethods []acpclient.AuthMethod `json:"authMethods"`
		}
		if json.Unmarshal(e.Data, &data) == nil {
			methods = append(methods, data.AuthMethods...)
		}
	}
	seen := map[string]bool{}
	var out []AuthOption
	for _, m := range methods {
		if m.ID == "" || seen[m.ID] {
			continue
		}
		opt, ok := b.authOption(m)
		if !ok {
			continue
		}
		seen[m.ID] = true
		out = append(out, opt)
	}
	return out
}

func (b *Bridge) authOption(m acpclient.AuthMethod) (AuthOption, bool) {
	opt := AuthOption{ID: m.ID, Name: m.Name, Description: m.Description}
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(m.Meta, &meta)
	var ta terminalAuthMeta
	if raw, ok := meta["terminal-auth"]; ok && json.Unmarshal(raw, &ta) == nil && ta.Command != "" {
		if b.cfg.TerminalLogin == nil {
			return opt, false
		}
		opt.Type, opt.Command, opt.Args, opt.Env = AuthTypeTerminal, ta.Command, ta.Args, ta.Env
		return opt, true
	}
	switch m.Type {
	case "", acpclient.AuthAgent:
		opt.Type = AuthTypeAgent
	case acpclient.AuthEnvVar:
		opt.Type, opt.Vars, opt.Link = AuthTypeEnvVar, m.Vars, m.Link
	case acpclient.AuthTerminal:
		if b.cfg.TerminalLogin == nil {
			return opt, false
		}
		cmd, args := b.launchCommand()
		opt.Type, opt.Command, opt.Args, opt.Env = AuthTypeTerminal, cmd, append(args, m.Args...), m.Env
	default:
		return opt, false // unknown types are not usable
	}
	return opt, true
}

// newSessionSignedIn runs the sign-in flow after session/new failed with
// auth required, then retries session/new (on the restarted process when
// the sign-in needed one).
func (b *Bridge) newSessionSignedIn(ctx context.Context, conn *acpclient.Conn, req *acpclient.NewSessionRequest, cause error) (*acpclient.Conn, *acpclient.NewSessionResponse, error) {
	err := cause
	for round := 0; round < maxAuthRounds && acpclient.IsAuthRequired(err); round++ {
		next, serr := b.signIn(ctx, nil, "session/new", err)
		if serr != nil {
			return conn, nil, serr // says the bridge and the call
		}
		conn = next
		var resp *acpclient.NewSessionResponse
		resp, err = conn.NewSession(ctx, req)
		if err == nil {
			return conn, resp, nil
		}
	}
	return conn, nil, fmt.Errorf("bridge %s: %w", b.cfg.ID, err)
}

// signIn asks the app to sign in (an auth_required event on s, or
// agent-wide when s is nil), carries out the chosen method and returns the
// connection to retry on.
func (b *Bridge) signIn(ctx context.Context, s *Session, call string, cause error) (*acpclient.Conn, error) {
	b.authMu.Lock()
	defer b.authMu.Unlock()
	conn, err := b.ensure(ctx)
	if err != nil {
		return nil, err
	}
	req := &AuthRequest{userRequest: newUserRequest(), ID: fmt.Sprintf("auth-%d", b.authSeq.Add(1)), Call: call,
		Methods: b.authOptions(conn.Agent(), cause)}
	req.Withheld = b.withheld(req.Methods)
	if e := errorsAsCall(cause); e != nil {
		req.Message = e.Message
	}
	b.await(ctx, s, req.ID, req)
	req.report = func(d Decision) { req.decision = d }
	ev := Event{Kind: KindAuthRequired, Auth: req}
	if s != nil {
		s.emit(ev)
	} else {
		b.emit(ev)
	}
	fail := func(why error) error {
		return withheldErr(req.Withheld, fmt.Errorf("bridge %s: %s: %w: %w", b.cfg.ID, call, ErrAuthRequired, why))
	}
	if len(req.Methods) == 0 {
		req.abandon(errNoSignInMethod)
		b.reporter(s)(req.decision)
		// cause names the call already.
		return nil, withheldErr(req.Withheld, fmt.Errorf("bridge %s: %w: the agent offers no sign-in method the app can use: %w", b.cfg.ID, ErrAuthRequired, cause))
	}
	req.awaitWhileUsable(conn) // answered, declined, or abandoned when ctx ends
	b.reporter(s)(req.decision)
	if req.refusal != nil {
		return nil, fail(req.refusal)
	}
	ans := req.answer
	secrets := slices.Collect(maps.Values(ans.Env))
	method, ok := req.method(ans.MethodID)
	if !ok {
		return nil, fail(fmt.Errorf("%q is not one of the offered methods", ans.MethodID))
	}
	next, err := b.carryOut(ctx, conn, method, ans)
	if err != nil {
		// A method that reads its key from the agent's environment fails
		// when the key was left out of it.
		var left []string
		for _, n := range req.Withheld {
			if _, given := ans.Env[n]; !given {
				left = append(left, n)
			}
		}
		return nil, withheldErr(left, redactError(fmt.Errorf("bridge %s: signing in with %q: %w", b.cfg.ID, method.ID, err), secrets))
	}
	return next, nil
}

// carryOut performs one sign-in method.
func (b *Bridge) carryOut(ctx context.Context, conn *acpclient.Conn, m AuthOption, ans AuthAnswer) (*acpclient.Conn, error) {
	switch m.Type {
	case AuthTypeEnvVar:
		env := map[string]string{}
		for _, v := range m.Vars {
			val, ok := ans.Env[v.Name]
			if (!ok || val == "") && !v.Optional {
				return nil, fmt.Errorf("no value for %s", v.Name)
			}
			if ok {
				env[v.Name] = val
			}
		}
		// Only what the method lists: an app that forwards a user's (or a
		// web page's) answer must not let it choose PATH, LD_PRELOAD or
		// NODE_OPTIONS for the agent. Other variables belong in the launch.
		var undeclared []string
		for k := range ans.Env {
			if !slices.ContainsFunc(m.Vars, func(v acpclient.AuthVar) bool { return v.Name == k }) {
				undeclared = append(undeclared, k)
			}
		}
		if len(undeclared) > 0 {
			slices.Sort(undeclared)
			return nil, fmt.Errorf("%w: %s", ErrAuthUndeclaredEnv, strings.Join(undeclared, ", "))
		}
		next, err := b.respawn(ctx, func(t acpclient.Transport) (acpclient.Transport, error) { return transportWithEnv(t, env) }, nil)
		if err != nil {
			return nil, err
		}
		if err := next.Authenticate(ctx, &acpclient.AuthenticateRequest{MethodID: m.ID, Meta: ans.Meta}); err != nil {
			return nil, err
		}
		return next, nil
	case AuthTypeTerminal:
		env := b.launchEnv()
		for k, v := range m.Env {
			env = append(env, k+"="+v)
		}
		for k, v := range ans.Env {
			env = append(env, k+"="+v)
		}
		if err := b.cfg.TerminalLogin(ctx, TerminalLogin{Method: m.ID, Command: m.Command, Args: m.Args, Env: env}); err != nil {
			return nil, fmt.Errorf("login command %s: %w", m.Command, err)
		}
		return b.respawn(ctx, func(t acpclient.Transport) (acpclient.Transport, error) { return t, nil }, nil)
	default:
		if err := conn.Authenticate(ctx, &acpclient.AuthenticateRequest{MethodID: m.ID, Meta: ans.Meta}); err != nil {
			return nil, err
		}
		return conn, nil
	}
}

// transportWithEnv returns a copy of t whose agent gets env on top of its
// environment, through the transport's own acpclient.EnvTransport.
func transportWithEnv(t acpclient.Transport, env map[string]string) (acpclient.Transport, error) {
	et, ok := t.(acpclient.EnvTransport)
	if !ok {
		return nil, fmt.Errorf("the agent's transport (%T) cannot be restarted with new environment variables", t)
	}
	return et.WithEnv(env)
}

// launchCommand returns the agent's program and arguments, for terminal
// login methods that rerun it: those of a transport that says which
// program it starts (acpclient.ProgramTransport), else none.
func (b *Bridge) launchCommand() (string, []string) {
	b.mu.Lock()
	t := b.cfg.Transport
	b.mu.Unlock()
	if pt, ok := t.(acpclient.ProgramTransport); ok {
		path, args, _ := pt.Program()
		return path, args
	}
	return "", nil
}

// launchEnv returns the environment the agent runs with: its transport's
// (acpclient.ProgramTransport), else this process's.
func (b *Bridge) launchEnv() []string {
	b.mu.Lock()
	t := b.cfg.Transport
	b.mu.Unlock()
	if pt, ok := t.(acpclient.ProgramTransport); ok {
		if _, _, env := pt.Program(); env != nil {
			return env
		}
	}
	return environ()
}

// redactedError hides secrets in an error's text. It answers errors.Is
// for the sentinels in its chain but does not unwrap, since the wrapped
// errors' texts still hold the secrets.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string        { return e.msg }
func (e *redactedError) Is(target error) bool { return errors.Is(e.err, target) }

func redactError(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	red := (&acpclient.Redactor{Values: secrets}).Redact(msg)
	if red == msg {
		return err
	}
	return &redactedError{msg: red, err: err}
}
