package acptest

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// handleRequest does the bookkeeping that must happen in arrival order (ids
// handed out, turns registered), then answers on its own goroutine so the
// read loop keeps reading.
func (c *conn) handleRequest(m Message) {
	key := idKey(m.ID)
	cl := newCall()
	c.mu.Lock()
	c.calls[key] = cl
	c.mu.Unlock()
	var params struct {
		SessionID string `json:"sessionId"`
		Cwd       string `json:"cwd"`
		MethodID  string `json:"methodId"`
	}
	json.Unmarshal(m.Params, &params)

	if m.Method == "session/prompt" {
		c.startPrompt(m, cl, params.SessionID)
		return
	}
	answer := func(session string, steps []Step, reply func() (any, *Error)) {
		c.handlers.Add(1)
		go func() {
			defer c.handlers.Done()
			defer c.forget(key, cl)
			err := c.run(runner{session: session, call: cl}, steps)
			switch {
			case errors.Is(err, errClosed):
				return
			case errors.Is(err, errCancelled):
				c.respond(m.ID, nil, &Error{Code: -32800, Message: "Request cancelled"})
				return
			}
			result, rpcErr := reply()
			if m.Method == "authenticate" && rpcErr == nil {
				c.mu.Lock()
				c.authed[params.MethodID] = true
				c.mu.Unlock()
			}
			if m.Method == "logout" && rpcErr == nil {
				c.mu.Lock()
				clear(c.authed) // signed out: RequireAuth applies again
				c.mu.Unlock()
			}
			c.respond(m.ID, result, rpcErr)
		}()
	}
	fixed := func(result any, rpcErr *Error) func() (any, *Error) {
		return func() (any, *Error) { return result, rpcErr }
	}

	if c.handleSteer(m, key, cl) {
		return
	}
	if canned, ok := c.script.Methods[m.Method]; ok {
		var result any
		if len(canned.Result) > 0 {
			result = canned.Result
		}
		answer(params.SessionID, canned.Steps, fixed(result, canned.Error))
		return
	}
	s := c.script
	switch m.Method {
	case "initialize":
		answer("", s.Initialize.Steps, fixed(c.initializeResult(), s.Initialize.Error))
	case "session/set_mode":
		answer(params.SessionID, c.modeReport(m.Params), func() (any, *Error) { return c.setMode(m.Params) })
	case "authenticate", "logout", "session/set_model":
		answer(params.SessionID, nil, fixed(nil, nil))
	case "session/new":
		if rpcErr := c.authError(); rpcErr != nil {
			answer("", nil, fixed(nil, rpcErr))
			return
		}
		id := c.newSessionID(params.Cwd)
		ns := s.NewSession
		answer(id, ns.Steps, fixed(sessionResult{
			SessionID: id, Modes: ns.Modes, ConfigOptions: ns.ConfigOptions, Models: ns.Models, Meta: ns.Meta,
		}, nil))
	case "session/load":
		ls := s.LoadSession
		if !c.knownSession(params.SessionID) {
			rpcErr := ls.UnknownError
			if rpcErr == nil {
				rpcErr = &Error{Code: -32002, Message: "Resource not found", Data: mustJSON(map[string]string{"sessionId": params.SessionID})}
			}
			answer("", nil, fixed(nil, rpcErr))
			return
		}
		c.addSession(params.SessionID, params.Cwd)
		var result any = sessionResult{Modes: ls.Modes, ConfigOptions: ls.ConfigOptions, Models: ls.Models}
		if ls.NullResult {
			result = json.RawMessage("null")
		}
		answer(params.SessionID, ls.Replay, fixed(result, nil))
	case "session/resume":
		c.addSession(params.SessionID, params.Cwd)
		ls := s.LoadSession // the state a load reports, without the replay
		answer(params.SessionID, nil, fixed(sessionResult{Modes: ls.Modes, ConfigOptions: ls.ConfigOptions, Models: ls.Models}, nil))
	case "session/close", "session/delete":
		c.mu.Lock()
		if turn := c.turns[params.SessionID]; turn != nil {
			turn.cancel()
		}
		if m.Method == "session/delete" {
			delete(c.sessions, params.SessionID)
		}
		c.mu.Unlock()
		answer(params.SessionID, nil, fixed(nil, nil))
	case "session/fork":
		id, result, rpcErr := c.fork(m.Params)
		answer(id, nil, fixed(result, rpcErr))
	case "session/list":
		answer("", nil, fixed(c.listPage(m.Params), nil))
	case "session/set_config_option":
		answer(params.SessionID, nil, func() (any, *Error) { return c.setConfigOption(m.Params) })
	default:
		answer("", nil, fixed(nil, &Error{Code: -32601, Message: "Method not found", Data: mustJSON(map[string]string{"method": m.Method})}))
	}
}

// forget drops a finished client request.
func (c *conn) forget(key string, cl *call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls[key] == cl {
		delete(c.calls, key)
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

type initializeResult struct {
	ProtocolVersion   int             `json:"protocolVersion"`
	AgentCapabilities json.RawMessage `json:"agentCapabilities,omitempty"`
	AuthMethods       json.RawMessage `json:"authMethods"`
	AgentInfo         json.RawMessage `json:"agentInfo,omitempty"`
	Meta              json.RawMessage `json:"_meta,omitempty"`
}

func (c *conn) initializeResult() initializeResult {
	in := c.script.Initialize
	r := initializeResult{
		ProtocolVersion:   c.script.ProtocolVersion,
		AgentCapabilities: in.AgentCapabilities,
		AuthMethods:       in.AuthMethods,
		AgentInfo:         in.AgentInfo,
		Meta:              in.Meta,
	}
	if r.ProtocolVersion == 0 {
		r.ProtocolVersion = 1
	}
	if len(r.AgentCapabilities) == 0 {
		r.AgentCapabilities = DefaultAgentCapabilities
	}
	if len(r.AuthMethods) == 0 {
		r.AuthMethods = json.RawMessage("[]")
	}
	if len(r.AgentInfo) == 0 {
		r.AgentInfo = DefaultAgentInfo
	}
	c.script.Steering.advertise(&r)
	return r
}

type sessionResult struct {
	SessionID     string          `json:"sessionId,omitempty"`
	Modes         json.RawMessage `json:"modes,omitempty"`
	ConfigOptions json.RawMessage `json:"configOptions,omitempty"`
	Models        json.RawMessage `json:"models,omitempty"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

func (c *conn) authError() *Error {
	ns := c.script.NewSession
	if ns.RequireAuth == "" {
		return nil
	}
	c.mu.Lock()
	ok := c.authed[ns.RequireAuth] || (ns.RequireAuth == "*" && len(c.authed) > 0)
	c.mu.Unlock()
	if ok {
		return nil
	}
	if ns.AuthError != nil {
		return ns.AuthError
	}
	return &Error{Code: -32000, Message: "Authentication required"}
}

func (c *conn) newSessionID(cwd string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := c.script.NewSession.SessionIDs
	var id string
	if c.created < len(ids) {
		id = ids[c.created]
	} else {
		id = "sess_" + strconv.Itoa(c.created+1)
	}
	c.created++
	c.sessions[id] = cwd
	return id
}

func (c *conn) knownSession(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.sessions[id]; ok {
		return true
	}
	for _, known := range c.script.LoadSession.Sessions {
		if known == id {
			return true
		}
	}
	return false
}

func (c *conn) addSession(id, cwd string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sessions[id] = cwd
}

type sessionInfo struct {
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
}

func (c *conn) listSessions() []sessionInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	list := []sessionInfo{}
	for id, cwd := range c.sessions {
		list = append(list, sessionInfo{SessionID: id, Cwd: cwd})
	}
	for _, id := range c.script.LoadSession.Sessions {
		if _, ok := c.sessions[id]; !ok {
			list = append(list, sessionInfo{SessionID: id, Cwd: "/"})
		}
	}
	slices.SortFunc(list, func(a, b sessionInfo) int { return strings.Compare(a.SessionID, b.SessionID) })
	return list
}

// modeParams are session/set_mode's params.
type modeParams struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
}

// setMode accepts a mode unless the script refuses it.
func (c *conn) setMode(raw json.RawMessage) (any, *Error) {
	var p modeParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, &Error{Code: -32602, Message: "Invalid params"}
	}
	if slices.Contains(c.script.SetMode.Refuse, p.ModeID) {
		return nil, &Error{Code: -32602, Message: "Invalid params: mode " + strconv.Quote(p.ModeID) + " refused"}
	}
	return nil, nil
}

// modeReport is the current_mode_update sent before an accepted mode's
// answer, when the script asks for it.
func (c *conn) modeReport(raw json.RawMessage) []Step {
	var p modeParams
	if json.Unmarshal(raw, &p) != nil || !c.script.SetMode.Report || slices.Contains(c.script.SetMode.Refuse, p.ModeID) {
		return nil
	}
	return []Step{{Update: mustJSON(map[string]string{"sessionUpdate": "current_mode_update", "currentModeId": p.ModeID})}}
}

// setConfigOption updates the current value of one option and returns the
// complete list, as ACP requires.
func (c *conn) setConfigOption(raw json.RawMessage) (any, *Error) {
	var p struct {
		ConfigID string `json:"configId"`
		Value    any    `json:"value"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, &Error{Code: -32602, Message: "Invalid params"}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.options == nil {
		c.options = []map[string]any{}
		if len(c.script.NewSession.ConfigOptions) > 0 {
			if err := json.Unmarshal(c.script.NewSession.ConfigOptions, &c.options); err != nil {
				return nil, &Error{Code: -32603, Message: "script configOptions: " + err.Error()}
			}
		}
	}
	for _, opt := range c.options {
		if opt["id"] == p.ConfigID {
			opt["currentValue"] = p.Value
			return map[string]any{"configOptions": c.options}, nil
		}
	}
	return nil, &Error{Code: -32602, Message: "Invalid params: unknown config option " + strconv.Quote(p.ConfigID)}
}

// startPrompt registers the turn (so a session/cancel read next finds it)
// and runs it on its own goroutine.
func (c *conn) startPrompt(m Message, cl *call, sessionID string) {
	var p struct {
		Prompt []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"prompt"`
	}
	json.Unmarshal(m.Params, &p)
	var texts []string
	for _, block := range p.Prompt {
		if block.Type == "text" {
			texts = append(texts, block.Text)
		}
	}
	turn := pickTurn(c.script.Prompts, strings.Join(texts, "\n"))
	cl.ignoreCancel = turn.IgnoreCancel
	c.mu.Lock()
	c.turns[sessionID] = cl
	c.mu.Unlock()

	c.handlers.Add(1)
	go func() {
		defer c.handlers.Done()
		key := idKey(m.ID)
		defer c.forget(key, cl)
		err := c.run(runner{session: sessionID, call: cl}, turn.Steps)
		if errors.Is(err, errClosed) {
			return
		}
		c.mu.Lock()
		if c.turns[sessionID] == cl {
			delete(c.turns, sessionID)
		}
		c.mu.Unlock()
		result := promptResult{StopReason: turn.StopReason, Usage: turn.Usage, Meta: turn.Meta}
		if result.StopReason == "" {
			result.StopReason = "end_turn"
		}
		var rpcErr *Error
		switch {
		case errors.Is(err, errCancelled):
			result.StopReason = "cancelled"
		case turn.Error != nil:
			rpcErr = turn.Error
		}
		if c.respond(m.ID, result, rpcErr) != nil {
			return
		}
		if err := c.run(runner{session: sessionID}, turn.After); err != nil && !errors.Is(err, errClosed) {
			c.logf("after steps: %v", err)
		}
	}()
}

type promptResult struct {
	StopReason string          `json:"stopReason"`
	Usage      json.RawMessage `json:"usage,omitempty"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

func pickTurn(turns []Turn, text string) Turn {
	for _, t := range turns {
		if t.Match != "" && strings.Contains(text, t.Match) {
			return t
		}
	}
	for _, t := range turns {
		if t.Match == "" {
			return t
		}
	}
	return Turn{}
}
