package acptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// runner is the context a step list runs in.
type runner struct {
	// session is the session id steps speak for by default.
	session string
	// call is the client request the steps belong to; nil for steps that
	// nothing can cancel (onStart, after).
	call *call
	// finish runs every step even if the call is cancelled meanwhile
	// (permission branches).
	finish bool
}

// cancelled returns the channel that closes when the steps should stop
// waiting, or nil if nothing can cancel them.
func (rn runner) cancelled() <-chan struct{} {
	if rn.call == nil || rn.call.ignoreCancel {
		return nil
	}
	return rn.call.cancelled
}

func (rn runner) stopped() bool {
	return !rn.finish && rn.call != nil && !rn.call.ignoreCancel && rn.call.isCancelled()
}

// run runs steps in order. It returns errClosed when the connection ended,
// errCancelled when the call was cancelled, nil otherwise; a step that
// cannot be carried out is reported on stderr and skipped.
func (c *conn) run(rn runner, steps []Step) error {
	for i := range steps {
		if c.ctx.Err() != nil {
			return errClosed
		}
		// A Hang step hangs even when a cancel came just before it, so a
		// test that cancels a hanging turn sees no answer, always.
		if rn.stopped() && !steps[i].Hang {
			return errCancelled
		}
		if err := c.step(rn, &steps[i]); err != nil {
			if err == errClosed || err == errCancelled {
				return err
			}
			c.logf("step %d: %v", i, err)
		}
	}
	if rn.stopped() {
		return errCancelled
	}
	return nil
}

func (c *conn) step(rn runner, s *Step) error {
	session := rn.session
	if s.SessionID != "" {
		session = s.SessionID
	}
	switch {
	case len(s.Update) > 0:
		return c.sendUpdate(session, c.expandJSON(session, s.Update))
	case s.Text != "":
		return c.sendText(session, s.Text)
	case s.Notify != nil:
		return c.send(wireMessage{Method: s.Notify.Method, Params: rawOrNil(s.Notify.Params)})
	case s.Request != nil:
		return c.requestStep(session, s.Request)
	case s.Permission != nil:
		return c.permissionStep(rn, session, s.Permission)
	case s.ReadFile != nil:
		return c.readFileStep(session, s.ReadFile)
	case s.WriteFile != nil:
		return c.writeFileStep(rn, session, s.WriteFile)
	case s.Terminal != nil:
		return c.terminalStep(session, s.Terminal)
	case s.Sleep > 0:
		timer := time.NewTimer(time.Duration(s.Sleep))
		defer timer.Stop()
		select {
		case <-timer.C:
			return nil
		case <-rn.cancelled():
			return errCancelled
		case <-c.ctx.Done():
			return errClosed
		}
	case s.Junk != "":
		return c.write([]byte(s.Junk + "\n"))
	case s.Raw != "":
		return c.write([]byte(s.Raw))
	case s.Huge > 0:
		return c.writeHuge(session, s.Huge)
	case s.Stderr != "":
		c.stderr(s.Stderr)
		return nil
	case s.Respond != nil:
		id := s.Respond.ID
		if len(id) == 0 {
			id = json.RawMessage("null")
		}
		var result any
		if len(s.Respond.Result) > 0 {
			result = s.Respond.Result
		}
		return c.respond(id, result, s.Respond.Error)
	case s.Exit != nil:
		c.exit(*s.Exit)
		return errClosed
	case s.Hang:
		<-c.ctx.Done()
		return errClosed
	case s.WaitSteer:
		if rn.call == nil {
			return fmt.Errorf("waitSteer outside a turn: nothing to wait for")
		}
		select {
		case <-rn.call.steered:
			return nil
		case <-rn.cancelled():
			return errCancelled
		case <-c.ctx.Done():
			return errClosed
		}
	case s.WaitCancel:
		if rn.call == nil {
			return fmt.Errorf("waitCancel outside a request: nothing to wait for")
		}
		select {
		case <-rn.call.cancelled:
			if rn.call.ignoreCancel {
				return nil
			}
			return errCancelled
		case <-c.ctx.Done():
			return errClosed
		}
	}
	return fmt.Errorf("empty step: set one action")
}

func rawOrNil(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return raw
}

type sessionNotification struct {
	SessionID string `json:"sessionId"`
	Update    any    `json:"update"`
}

func (c *conn) sendUpdate(session string, update any) error {
	return c.send(wireMessage{Method: "session/update", Params: sessionNotification{SessionID: session, Update: update}})
}

type textChunk struct {
	SessionUpdate string      `json:"sessionUpdate"`
	Content       textContent `json:"content"`
	MessageID     string      `json:"messageId,omitempty"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// report tells the client what a step's request got back, as a text chunk,
// unless the script asks for quiet reports. Each report is a message of its
// own (messageId "report-N"), so a host that merges the deltas of one
// message while its consumer lags never joins two reports into one event.
func (c *conn) report(session, text string) error {
	if c.script.QuietReports {
		return nil
	}
	c.mu.Lock()
	c.reports++
	id := fmt.Sprintf("report-%d", c.reports)
	c.mu.Unlock()
	return c.sendUpdate(session, textChunk{SessionUpdate: "agent_message_chunk", Content: textContent{Type: "text", Text: text}, MessageID: id})
}

func (c *conn) sendText(session, text string) error {
	return c.sendUpdate(session, textChunk{SessionUpdate: "agent_message_chunk", Content: textContent{Type: "text", Text: text}})
}

// writeHuge writes one agent_message_chunk line whose text is n bytes,
// streaming the text from one small buffer.
func (c *conn) writeHuge(session string, n int64) error {
	sid, _ := json.Marshal(session)
	head := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + string(sid) +
		`,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	fail := func() error {
		c.cancel()
		return errClosed
	}
	if _, err := c.w.Write([]byte(head)); err != nil {
		return fail()
	}
	for n > 0 {
		piece := chunk
		if int64(len(piece)) > n {
			piece = piece[:n]
		}
		if _, err := c.w.Write(piece); err != nil {
			return fail()
		}
		n -= int64(len(piece))
	}
	if _, err := c.w.Write([]byte("\"}}}}\n")); err != nil {
		return fail()
	}
	return nil
}

// newRequestID returns the id of the agent's next request.
func (c *conn) newRequestID() json.RawMessage {
	c.mu.Lock()
	n := c.nextID
	c.nextID++
	c.mu.Unlock()
	if c.script.RequestIDs.Strings {
		return json.RawMessage(fmt.Sprintf(`"%08x-0000-4000-8000-%012x"`, n, n))
	}
	return json.RawMessage(strconv.FormatInt(n, 10))
}

// request sends a request to the client and waits for its answer. It waits
// through cancellation (the client owes an answer either way) and ends early
// only when the connection does. With cancelAfter, it sends
// $/cancel_request once that much time has passed.
func (c *conn) request(method string, params any, cancelAfter Duration) (Message, error) {
	id := c.newRequestID()
	key := idKey(id)
	answer := make(chan Message, 1)
	c.mu.Lock()
	c.pending[key] = answer
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, key)
		c.mu.Unlock()
	}()
	if err := c.send(wireMessage{ID: id, Method: method, Params: params}); err != nil {
		return Message{}, err
	}
	var cancelTimer <-chan time.Time
	if cancelAfter > 0 {
		t := time.NewTimer(time.Duration(cancelAfter))
		defer t.Stop()
		cancelTimer = t.C
	}
	for {
		select {
		case m := <-answer:
			return m, nil
		case <-cancelTimer:
			cancelTimer = nil
			if err := c.send(wireMessage{Method: "$/cancel_request", Params: map[string]json.RawMessage{"requestId": id}}); err != nil {
				return Message{}, err
			}
		case <-c.ctx.Done():
			return Message{}, errClosed
		}
	}
}

// describeError renders an error answer for reports.
func describeError(e *Error) string {
	return fmt.Sprintf("error %d %s", e.Code, e.Message)
}

func (c *conn) requestStep(session string, r *Request) error {
	m, err := c.request(r.Method, rawOrNil(r.Params), r.CancelAfter)
	if err != nil {
		return err
	}
	report := "request " + r.Method + ": "
	if m.Error != nil {
		report += describeError(m.Error)
	} else {
		var b bytes.Buffer
		json.Compact(&b, m.Result)
		report += "result " + b.String()
	}
	return c.report(session, report)
}

type permissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  json.RawMessage    `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
}

func (c *conn) permissionStep(rn runner, session string, p *Permission) error {
	req := permissionRequest{SessionID: session, ToolCall: p.ToolCall, Options: p.Options}
	if len(req.ToolCall) == 0 {
		req.ToolCall = json.RawMessage(`{"toolCallId":"call_1"}`)
	}
	if len(req.Options) == 0 {
		req.Options = DefaultPermissionOptions
	}
	m, err := c.request("session/request_permission", req, p.CancelAfter)
	if err != nil {
		return err
	}
	var branch []Step
	var report string
	var answer struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	switch {
	case m.Error != nil:
		report = "permission: " + describeError(m.Error)
	case json.Unmarshal(m.Result, &answer) != nil:
		report = "permission: unknown " + string(m.Result)
	case answer.Outcome.Outcome == "cancelled":
		report = "permission: cancelled"
		branch = p.OnCancelled
	case answer.Outcome.Outcome == "selected":
		report = "permission: selected " + answer.Outcome.OptionID
		if steps, ok := p.OnSelect[answer.Outcome.OptionID]; ok {
			branch = steps
		} else if kind := optionKind(req.Options, answer.Outcome.OptionID); strings.HasPrefix(kind, "reject") {
			branch = p.OnReject
		}
	default:
		var b bytes.Buffer
		json.Compact(&b, m.Result)
		report = "permission: unknown " + b.String()
	}
	if err := c.report(session, report); err != nil {
		return err
	}
	rn.finish = true
	rn.session = session
	return c.run(rn, branch)
}

func optionKind(options []PermissionOption, id string) string {
	for _, o := range options {
		if o.OptionID == id {
			return o.Kind
		}
	}
	return ""
}

type readFileRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Line      int    `json:"line,omitempty"`
	Limit     int    `json:"limit,omitempty"`
}

func (c *conn) readFileStep(session string, r *ReadFile) error {
	path := c.expandPath(session, r.Path)
	m, err := c.request("fs/read_text_file", readFileRequest{SessionID: session, Path: path, Line: r.Line, Limit: r.Limit}, 0)
	if err != nil {
		return err
	}
	report := "read " + path + ": "
	var result struct {
		Content string `json:"content"`
	}
	switch {
	case m.Error != nil:
		report += describeError(m.Error)
	case json.Unmarshal(m.Result, &result) != nil:
		report += "unknown " + string(m.Result)
	default:
		report += result.Content
	}
	return c.report(session, report)
}

type writeFileRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Content   string `json:"content"`
}

func (c *conn) writeFileStep(rn runner, session string, w *WriteFile) error {
	path := c.expandPath(session, w.Path)
	m, err := c.request("fs/write_text_file", writeFileRequest{SessionID: session, Path: path, Content: w.Content}, 0)
	if err != nil {
		return err
	}
	report, branch := "write "+path+": ok", w.OnOK
	if m.Error != nil {
		report, branch = "write "+path+": "+describeError(m.Error), w.OnError
	}
	if err := c.report(session, report); err != nil {
		return err
	}
	return c.run(rn, branch)
}

type createTerminalRequest struct {
	SessionID       string          `json:"sessionId"`
	Command         string          `json:"command"`
	Args            []string        `json:"args,omitempty"`
	Env             json.RawMessage `json:"env,omitempty"`
	Cwd             string          `json:"cwd,omitempty"`
	OutputByteLimit int64           `json:"outputByteLimit,omitempty"`
}

type terminalRequest struct {
	SessionID  string `json:"sessionId"`
	TerminalID string `json:"terminalId"`
}

type exitStatus struct {
	ExitCode *int    `json:"exitCode"`
	Signal   *string `json:"signal"`
}

func (s exitStatus) String() string {
	code, signal := "none", "none"
	if s.ExitCode != nil {
		code = strconv.Itoa(*s.ExitCode)
	}
	if s.Signal != nil {
		signal = *s.Signal
	}
	return "exit " + code + " signal " + signal
}

func (c *conn) terminalStep(session string, t *Terminal) error {
	// call makes one terminal request; ok is false once the failure has
	// been reported.
	call := func(method string, params any, result any) (ok bool, err error) {
		m, err := c.request(method, params, 0)
		if err != nil {
			return false, err
		}
		if m.Error != nil {
			return false, c.report(session, "terminal: "+method+" "+describeError(m.Error))
		}
		if err := json.Unmarshal(m.Result, result); err != nil {
			return false, c.report(session, "terminal: "+method+" unknown "+string(m.Result))
		}
		return true, nil
	}
	var created struct {
		TerminalID string `json:"terminalId"`
	}
	create := createTerminalRequest{SessionID: session, Command: t.Command, Args: t.Args, Env: t.Env, Cwd: t.Cwd, OutputByteLimit: t.OutputByteLimit}
	if ok, err := call("terminal/create", create, &created); !ok {
		return err
	}
	term := terminalRequest{SessionID: session, TerminalID: created.TerminalID}
	if t.ToolCallID != "" {
		update := map[string]any{
			"sessionUpdate": "tool_call_update",
			"toolCallId":    t.ToolCallID,
			"content":       []any{map[string]string{"type": "terminal", "terminalId": created.TerminalID}},
		}
		if err := c.sendUpdate(session, update); err != nil {
			return err
		}
	}
	if t.Kill {
		var killed json.RawMessage
		if ok, err := call("terminal/kill", term, &killed); !ok {
			return err
		}
	}
	var exited exitStatus
	if ok, err := call("terminal/wait_for_exit", term, &exited); !ok {
		return err
	}
	var output struct {
		Output    string `json:"output"`
		Truncated bool   `json:"truncated"`
	}
	if ok, err := call("terminal/output", term, &output); !ok {
		return err
	}
	var released json.RawMessage
	if ok, err := call("terminal/release", term, &released); !ok {
		return err
	}
	return c.report(session, fmt.Sprintf("terminal: %s truncated %t output %q", exited, output.Truncated, output.Output))
}
