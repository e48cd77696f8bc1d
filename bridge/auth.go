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
	path, args, _ := b.program()
	return path, args
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
