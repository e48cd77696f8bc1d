package acpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/waitfor"
)

const fullCaps = `{"loadSession":true,"promptCapabilities":{"image":true},"sessionCapabilities":{"list":{},"resume":{},"close":{}}}`

type fsClient struct {
	*recorder
	reads chan *ReadTextFileRequest
}

func (f *fsClient) ReadTextFile(ctx context.Context, req *ReadTextFileRequest) (*ReadTextFileResponse, error) {
	if f.reads != nil {
		f.reads <- req
	}
	if req.Path == "/missing" {
		return nil, NewError(CodeResourceNotFound, "no such file: %s", req.Path)
	}
	return &ReadTextFileResponse{Content: "content of " + req.Path}, nil
}

func TestInitializeAdvertisesWhatTheClientImplements(t *testing.T) {
	tests := []struct {
		name   string
		client Client
		want   string
	}{
		{"updates only", newRecorder(), `{"fs":{"readTextFile":false,"writeTextFile":false}}`},
		{"file reader", &fsClient{recorder: newRecorder()}, `{"fs":{"readTextFile":true,"writeTextFile":false}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, p := newPair(t, tt.client, nil)
			errc := make(chan error, 1)
			go func() {
				_, err := c.Initialize(waitfor.Context(t), &InitializeRequest{
					// A claim the client cannot back is overridden.
					ClientCapabilities: ClientCapabilities{Terminal: true},
				})
				errc <- err
			}()
			m := p.recv()
			var params struct {
				ProtocolVersion    int             `json:"protocolVersion"`
				ClientCapabilities json.RawMessage `json:"clientCapabilities"`
			}
			json.Unmarshal(m.Params, &params)
			if params.ProtocolVersion != 1 || string(params.ClientCapabilities) != tt.want {
				t.Errorf("initialize params = %s, want version 1 and capabilities %s", m.Params, tt.want)
			}
			p.sendf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1}}`, m.ID)
			if err := waitfor.Recv(t, errc, "the call to return its error"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestInitializeRejectsUnknownProtocolVersion(t *testing.T) {
	c, p := newPair(t, newRecorder(), nil)
	errc := make(chan error, 1)
	go func() { _, err := c.Initialize(waitfor.Context(t), nil); errc <- err }()
	m := p.recv()
	p.sendf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":2}}`, m.ID)
	err := waitfor.Recv(t, errc, "the call to return its error")
	if !errors.Is(err, ErrProtocolVersion) || !strings.Contains(err.Error(), "version 2") {
		t.Fatalf("Initialize error = %v, want ErrProtocolVersion naming version 2", err)
	}
	waitfor.Closed(t, c.Done(), "the connection to end")
	if !errors.Is(c.Err(), ErrProtocolVersion) {
		t.Errorf("Conn.Err() = %v, want it to say why it closed", c.Err())
	}
}

func TestCallsAreCapabilityGated(t *testing.T) {
	c, p := newPair(t, newRecorder(), nil)
	ctx := context.Background()
	if _, err := c.NewSession(ctx, &NewSessionRequest{Cwd: "/"}); !errors.Is(err, ErrNotInitialized) {
		t.Fatalf("NewSession before Initialize: %v, want ErrNotInitialized", err)
	}
	p.handshake(c, `{"promptCapabilities":{}}`)
	checks := []struct {
		name string
		call func() error
	}{
		{"load", func() error { _, err := c.LoadSession(ctx, &LoadSessionRequest{SessionID: "s", Cwd: "/"}); return err }},
		{"resume", func() error {
			_, err := c.ResumeSession(ctx, &ResumeSessionRequest{SessionID: "s", Cwd: "/"})
			return err
		}},
		{"list", func() error { _, err := c.ListSessions(ctx, nil); return err }},
		{"delete", func() error { return c.DeleteSession(ctx, "s") }},
		{"close", func() error { return c.CloseSession(ctx, "s") }},
		{"logout", func() error { return c.Logout(ctx) }},
		{"fork", func() error { _, err := c.ForkSession(ctx, &ForkSessionRequest{SessionID: "s", Cwd: "/"}); return err }},
		{"image prompt", func() error {
			_, err := c.Prompt(ctx, &PromptRequest{SessionID: "s", Prompt: []ContentBlock{ImageBlock("aGk=", "image/png")}})
			return err
		}},
		{"extra dirs", func() error {
			_, err := c.NewSession(ctx, &NewSessionRequest{Cwd: "/", AdditionalDirectories: []string{"/tmp"}})
			return err
		}},
		{"http mcp", func() error {
			_, err := c.NewSession(ctx, &NewSessionRequest{Cwd: "/", MCPServers: []MCPServer{{Type: "http", Name: "h", URL: "http://x"}}})
			return err
		}},
	}
	for _, ch := range checks {
		if err := ch.call(); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: error %v, want ErrUnsupported", ch.name, err)
		}
	}
	// Nothing was sent for the refused calls: the next line is this one.
	go c.Cancel(ctx, "s")
	if m := p.recv(); m.Method != "session/cancel" {
		t.Fatalf("agent received %q after refused calls, want session/cancel", m.Method)
	}
}

func TestNewSessionSendsRequiredArrays(t *testing.T) {
	c, p := newPair(t, newRecorder(), nil)
	p.handshake(c, fullCaps)
	done := make(chan *NewSessionResponse, 1)
	go func() {
		resp, err := c.NewSession(waitfor.Context(t), &NewSessionRequest{Cwd: "/w"})
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	m := p.recv()
	if string(m.Params) != `{"cwd":"/w","mcpServers":[]}` {
		t.Errorf("session/new params = %s", m.Params)
	}
	p.sendf(`{"jsonrpc":"2.0","id":%s,"result":{"sessionId":"s1","models":{"currentModelId":"m1","availableModels":[{"modelId":"m1","name":"M1"}]},"configOptions":[{"id":"model","name":"Model","type":"select","currentValue":"a","options":[{"group":"g","name":"G","options":[{"value":"a","name":"A"}]}]},{"id":"x","name":"X","type":"slider","currentValue":3}]}}`, m.ID)
	resp := waitfor.Recv(t, done, "the call to return")
	if resp.SessionID != "s1" || resp.Models.CurrentModelID != "m1" {
		t.Errorf("response %+v", resp)
	}
	if got := resp.ConfigOptions[0].Values(); len(got) != 1 || got[0].Value != "a" || resp.ConfigOptions[0].Value != "a" {
		t.Errorf("grouped select decoded as %+v", resp.ConfigOptions[0])
	}
	if resp.ConfigOptions[1].Raw == nil {
		t.Errorf("unknown option type lost its JSON: %+v", resp.ConfigOptions[1])
	}
}

func TestAgentErrorsAreTyped(t *testing.T) {
	c, p := newPair(t, newRecorder(), nil)
	p.handshake(c, fullCaps)
	errc := make(chan error, 1)
	go func() { _, err := c.NewSession(waitfor.Context(t), &NewSessionRequest{Cwd: "/"}); errc <- err }()
	m := p.recv()
	p.sendf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"Authentication required","data":{"message":"log in first"}}}`, m.ID)
	err := waitfor.Recv(t, errc, "the call to return its error")
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeAuthRequired || !IsAuthRequired(err) || e.DataMessage() != "log in first" {
		t.Fatalf("error %v does not unwrap to the agent's -32000", err)
	}
	if !strings.Contains(err.Error(), "session/new") {
		t.Errorf("error %q does not name the method", err)
	}
}

// TestBadLinesCostOneLine feeds every kind of junk and checks each is
// reported, skipped, and the connection keeps working.
func TestBadLinesCostOneLine(t *testing.T) {
	var mu sync.Mutex
	var bad []BadLine
	rec := newRecorder()
	c, p := newPair(t, rec, &ConnOptions{OnBadLine: func(b BadLine) {
		mu.Lock()
		bad = append(bad, b)
		mu.Unlock()
	}})
	p.handshake(c, fullCaps)
	junk := []string{
		`npm WARN deprecated something@1.0`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","upd`,
		`[1,2,3]`,
		`42`,
		`"just a string"`,
		`{"jsonrpc":"2.0","id":99,"result":{}}`,
		`{"jsonrpc":"2.0","id":null,"result":{}}`,
		`{"jsonrpc":"2.0","id":"abc","error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","method":"x","id":3,"result":{}}`,
		`{"jsonrpc":"1.0","method":"session/update","params":{}}`,
		`{"foo":"bar"}`,
		"\x00\x01\x02 binary",
	}
	p.send(junk...)
	p.send(chunkLineJSON("s", "still alive"))
	ups := rec.waitUpdates(t, 1)
	if got := textOf(t, ups[0]); got != "still alive" {
		t.Fatalf("update after junk = %q", got)
	}
	mu.Lock()
	n := len(bad)
	mu.Unlock()
	if n != len(junk) {
		t.Errorf("reported %d bad lines, want %d: %+v", n, len(junk), bad)
	}
	// The connection still answers calls.
	errc := make(chan error, 1)
	go func() { _, err := c.ListSessions(context.Background(), nil); errc <- err }()
	m := p.recv()
	p.sendf(`{"jsonrpc":"2.0","id":%s,"result":{"sessions":[]}}`, m.ID)
	if err := waitfor.Recv(t, errc, "the call to return its error"); err != nil {
		t.Fatal(err)
	}
	if c.Err() != nil {
		t.Fatalf("connection ended: %v", c.Err())
	}
}

func TestLineOverCapEndsConnectionWithTypedError(t *testing.T) {
	c, p := newPair(t, newRecorder(), &ConnOptions{MaxLineBytes: 1 << 16})
	// The client stops reading mid-line, so the write may fail: ignore it.
	go p.conn.Write([]byte(chunkLineJSON("s", strings.Repeat("x", 1<<17)) + "\n"))
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("connection did not end")
	}
	if !errors.Is(c.Err(), ErrLineTooLong) || !errors.Is(c.Err(), ErrClosed) {
		t.Fatalf("Err() = %v, want ErrLineTooLong", c.Err())
	}
}

func TestHugeLineWithinCap(t *testing.T) {
	size := 100 << 20
	if testing.Short() || raceEnabled {
		// The race detector makes a 100 MiB decode take minutes.
		size = 8 << 20
	}
	rec := newRecorder()
	c, p := newPair(t, rec, nil)
	_ = c
	text := strings.Repeat("a", size)
	go p.send(chunkLineJSON("s", text), chunkLineJSON("s", "next"))
	ups := rec.waitUpdates(t, 2)
	if got := textOf(t, ups[0]); len(got) != size {
		t.Fatalf("huge chunk has %d bytes, want %d", len(got), size)
	}
	if textOf(t, ups[1]) != "next" {
		t.Fatal("line after the huge one lost")
	}
}

// TestPromptReturnsAfterEveryEarlierUpdate checks the ordering promise: the
// agent's updates sent before the prompt response are all delivered when
// Prompt returns, even with a slow client and a small queue budget.
func TestPromptReturnsAfterEveryEarlierUpdate(t *testing.T) {
	rec := newRecorder()
	rec.block = make(chan struct{})
	c, p := newPair(t, rec, &ConnOptions{MaxQueuedBytes: 4 << 10})
	go func() {
		// Release the slow client gradually.
		for {
			select {
			case rec.block <- struct{}{}:
			case <-c.Done():
				return
			}
		}
	}()
	p.handshake(c, fullCaps)
	type result struct {
		resp  *PromptResponse
		count int
		err   error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := c.Prompt(waitfor.Context(t), &PromptRequest{SessionID: "s", Prompt: []ContentBlock{TextBlock("hi")}})
		done <- result{resp, rec.count(), err}
	}()
	m := p.recv()
	const n = 500
	for i := 0; i < n; i++ {
		p.send(chunkLineJSON("s", fmt.Sprint(i)))
	}
	p.sendf(`{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn","usage":{"totalTokens":5,"inputTokens":3,"outputTokens":2}}}`, m.ID)
	// A late update, after the response, is still delivered.
	p.send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":10,"size":100}}}`)
	r := waitfor.Recv(t, done, "the call to return")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.count < n {
		t.Fatalf("Prompt returned after %d of %d earlier updates", r.count, n)
	}
	if r.resp.StopReason != StopEndTurn || r.resp.Usage == nil || r.resp.Usage.TotalTokens != 5 {
		t.Errorf("response %+v", r.resp)
	}
	ups := rec.waitUpdates(t, n+1)
	for i := 0; i < n; i++ {
		if got := textOf(t, ups[i]); got != fmt.Sprint(i) {
			t.Fatalf("update %d = %q: reordered", i, got)
		}
	}
	if u, ok := ups[n].Update.(*UsageUpdate); !ok || u.Used != 10 {
		t.Fatalf("late update = %#v", ups[n].Update)
	}
}

func TestUpdatesBeforeNewSessionAnswerArriveFirst(t *testing.T) {
	rec := newRecorder()
	c, p := newPair(t, rec, nil)
	p.handshake(c, fullCaps)
	done := make(chan int, 1)
	go func() {
		if _, err := c.NewSession(waitfor.Context(t), &NewSessionRequest{Cwd: "/"}); err != nil {
			t.Error(err)
		}
		done <- rec.count()
	}()
	m := p.recv()
	p.send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s9","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"compact","description":"Compact"}]}}}`)
	p.sendf(`{"jsonrpc":"2.0","id":%s,"result":{"sessionId":"s9"}}`, m.ID)
	if got := waitfor.Recv(t, done, "the call to return"); got != 1 {
		t.Fatalf("NewSession returned with %d updates delivered, want the early one", got)
	}
	u := rec.snapshot()[0].Update.(*AvailableCommandsUpdate)
	if u.AvailableCommands[0].Name != "compact" {
		t.Errorf("commands %+v", u)
	}
}

func TestPermissionAnsweredLaterWhileUpdatesFlow(t *testing.T) {
	rec := newRecorder()
	c, p := newPair(t, rec, nil)
	p.handshake(c, fullCaps)
	// String ids, as some agents use, and an id equal to one of ours.
	p.send(`{"jsonrpc":"2.0","id":"perm-1","method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t1","title":"Write"},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"always","name":"Always","kind":"allow_always"}]}}`)
	call := waitfor.Recv(t, rec.perms, "a permission request")
	if call.req.ToolCall.ToolCallID != "t1" || len(call.req.Options) != 2 {
		t.Fatalf("permission request %+v", call.req)
	}
	// While the user thinks, updates keep arriving.
	p.send(chunkLineJSON("s", "meanwhile"))
	rec.waitUpdates(t, 1)
	go call.reply(PermissionSelected("allow"), nil)
	m := p.recv()
	if string(m.ID) != `"perm-1"` || string(m.Result) != `{"outcome":{"outcome":"selected","optionId":"allow"}}` {
		t.Fatalf("permission answer %s", m.line)
	}
	// A second answer is dropped.
	call.reply(PermissionCancelled(), nil)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"_x/ping","params":{}}`)
	if m := p.recv(); string(m.ID) != "1" || m.Error == nil || m.Error.Code != CodeMethodNotFound {
		t.Fatalf("after duplicate reply, got %s", m.line)
	}
}

func TestAgentCancelRequestAnswers32800(t *testing.T) {
	rec := newRecorder()
	c, p := newPair(t, rec, nil)
	p.handshake(c, fullCaps)
	p.send(`{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[]}}`)
	call := waitfor.Recv(t, rec.perms, "a permission request")
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}`)
	m := p.recv()
	if string(m.ID) != "7" || m.Error == nil || m.Error.Code != CodeRequestCancelled {
		t.Fatalf("got %s, want -32800 for id 7", m.line)
	}
	select {
	case <-call.ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("handler context not cancelled")
	}
	call.reply(PermissionSelected("x"), nil) // too late: must not be sent
	p.send(`{"jsonrpc":"2.0","id":8,"method":"no/such","params":{}}`)
	if m := p.recv(); string(m.ID) != "8" {
		t.Fatalf("a late reply was sent: %s", m.line)
	}
}

type extClient struct {
	*recorder
	notes chan string
}

func (e *extClient) HandleExtension(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method == "_fail" {
		return nil, errors.New("vendor failure")
	}
	return map[string]string{"echo": method}, nil
}

func (e *extClient) HandleExtensionNotification(ctx context.Context, method string, params json.RawMessage) {
	e.notes <- method + " " + string(params)
}

func TestExtensionsAndUnknownMethods(t *testing.T) {
	cl := &extClient{recorder: newRecorder(), notes: make(chan string, 4)}
	c, p := newPair(t, cl, nil)
	p.handshake(c, fullCaps)
	p.send(`{"jsonrpc":"2.0","method":"_kiro.dev/metadata","params":{"contextUsagePercentage":12.5}}`)
	if got := waitfor.Recv(t, cl.notes, "a notification"); got != `_kiro.dev/metadata {"contextUsagePercentage":12.5}` {
		t.Errorf("notification %q", got)
	}
	p.send(`{"jsonrpc":"2.0","id":1,"method":"_vendor/thing","params":{}}`)
	if m := p.recv(); string(m.Result) != `{"echo":"_vendor/thing"}` {
		t.Errorf("ext result %s", m.line)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"_fail","params":{}}`)
	if m := p.recv(); m.Error == nil || m.Error.Code != CodeInternalError || m.Error.Message != "vendor failure" {
		t.Errorf("ext error %s", m.line)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"terminal/create","params":{"sessionId":"s","command":"ls"}}`)
	if m := p.recv(); m.Error == nil || m.Error.Code != CodeMethodNotFound {
		t.Errorf("unimplemented terminal/create answered %s", m.line)
	}
	p.send(`{"jsonrpc":"2.0","id":4,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/x"}}`)
	if m := p.recv(); m.Error == nil || m.Error.Code != CodeMethodNotFound {
		t.Errorf("unadvertised fs read answered %s", m.line)
	}
}

func TestFileReadErrorsKeepTheirCode(t *testing.T) {
	c, p := newPair(t, &fsClient{recorder: newRecorder()}, nil)
	p.handshake(c, fullCaps)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a","line":2,"limit":3}}`)
	if m := p.recv(); string(m.Result) != `{"content":"content of /a"}` {
		t.Errorf("read result %s", m.line)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/missing"}}`)
	if m := p.recv(); m.Error == nil || m.Error.Code != CodeResourceNotFound || !strings.Contains(m.Error.Message, "/missing") {
		t.Errorf("missing file answered %s", m.line)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":"nonsense"}`)
	if m := p.recv(); m.Error == nil || m.Error.Code != CodeInvalidParams {
		t.Errorf("bad params answered %s", m.line)
	}
}

// line and limit outside uint32, or not integers, are invalid params, never
// read as "unset" (which would serve line 1).
func TestFileReadRejectsLineOutOfRange(t *testing.T) {
	cl := &fsClient{recorder: newRecorder(), reads: make(chan *ReadTextFileRequest, 16)}
	c, p := newPair(t, cl, nil)
	p.handshake(c, fullCaps)
	bad := []string{`"line":9223372036854775808`, `"line":18446744073709551621`, `"line":1e400`, `"line":1.5`,
		`"line":"3"`, `"line":-1`, `"limit":4294967296`, `"limit":true`, `"line":2,"limit":1e2`}
	for i, field := range bad {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a",%s}}`, i+1, field))
		if m := p.recv(); m.Error == nil || m.Error.Code != CodeInvalidParams {
			t.Errorf("%s answered %s", field, m.line)
		}
	}
	select {
	case req := <-cl.reads:
		t.Errorf("the client was asked to read %+v", req)
	default:
	}
	p.send(`{"jsonrpc":"2.0","id":99,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a","line":4294967295,"limit":null}}`)
	if m := p.recv(); m.Error != nil {
		t.Errorf("line 2^32-1 answered %s", m.line)
	}
	if req := waitfor.Recv(t, cl.reads, "a file read"); req.Line == nil || *req.Line != math.MaxUint32 || req.Limit != nil {
		t.Errorf("decoded line %v, limit %v", req.Line, req.Limit)
	}
}

func TestCallCancelledByContextTellsTheAgent(t *testing.T) {
	var mu sync.Mutex
	var bad []BadLine
	c, p := newPair(t, newRecorder(), &ConnOptions{OnBadLine: func(b BadLine) { mu.Lock(); bad = append(bad, b); mu.Unlock() }})
	p.handshake(c, fullCaps)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := c.ListSessions(ctx, nil); errc <- err }()
	m := p.recv()
	cancel()
	if err := waitfor.Recv(t, errc, "the call to return its error"); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	cr := p.recv()
	if cr.Method != "$/cancel_request" || string(cr.Params) != fmt.Sprintf(`{"requestId":%s}`, m.ID) {
		t.Fatalf("after cancel, agent got %s", cr.line)
	}
	// The agent's late answer is absorbed, not reported as junk.
	p.sendf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32800,"message":"cancelled"}}`, m.ID)
	p.send(chunkLineJSON("s", "x"))
	rec := c.client.(*recorder)
	rec.waitUpdates(t, 1)
	mu.Lock()
	defer mu.Unlock()
	if len(bad) != 0 {
		t.Errorf("late answer reported as bad line: %+v", bad)
	}
}

func TestPromptContextCancelSendsSessionCancel(t *testing.T) {
	c, p := newPair(t, newRecorder(), nil)
	p.handshake(c, fullCaps)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *PromptResponse, 1)
	go func() {
		resp, err := c.Prompt(ctx, &PromptRequest{SessionID: "s", Prompt: []ContentBlock{TextBlock("go")}})
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	m := p.recv()
	cancel()
	cm := p.recv()
	if cm.Method != "session/cancel" || cm.ID != nil || strings.Contains(string(cm.line), `"id"`) {
		t.Fatalf("got %s, want a session/cancel notification without id", cm.line)
	}
	select {
	case <-done:
		t.Fatal("Prompt returned before the agent ended the turn")
	case <-time.After(20 * time.Millisecond):
	}
	p.sendf(`{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"cancelled"}}`, m.ID)
	if r := waitfor.Recv(t, done, "the call to return"); r.StopReason != StopCancelled {
		t.Fatalf("stop reason %q", r.StopReason)
	}
}

func TestOutgoingLinesAreCompactJSONRPC(t *testing.T) {
	c, p := newPair(t, newRecorder(), nil)
	p.handshake(c, fullCaps)
	go c.Notify(context.Background(), "_vendor/note", map[string]string{"text": "a\nb"})
	m := p.recv()
	line := strings.TrimSuffix(string(m.line), "\n")
	if strings.ContainsAny(line, "\n\r") || m.JSONRPC != "2.0" || strings.Contains(line, `"id"`) {
		t.Fatalf("notification line %q", line)
	}
	go c.Call(context.Background(), "session/compact", map[string]string{"sessionId": "s"}, nil)
	m = p.recv()
	if m.JSONRPC != "2.0" || m.ID == nil || m.Method != "session/compact" {
		t.Fatalf("call line %s", m.line)
	}
	p.sendf(`{"jsonrpc":"2.0","id":%s,"result":null}`, m.ID)
}

func TestCallsFromClientMethodsDoNotDeadlock(t *testing.T) {
	var conn *Conn
	got := make(chan error, 1)
	cl := &callingClient{recorder: newRecorder(), call: func(ctx context.Context) {
		got <- conn.SetMode(ctx, &SetModeRequest{SessionID: "s", ModeID: "code"})
	}}
	c, p := newPair(t, cl, &ConnOptions{MaxQueuedBytes: 1})
	conn = c
	p.handshake(c, fullCaps)
	p.send(chunkLineJSON("s", "trigger"))
	m := p.recv()
	// Fill the queue past its budget before answering.
	for i := 0; i < 5; i++ {
		p.send(chunkLineJSON("s", "more"))
	}
	p.sendf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a call made from SessionUpdate deadlocked")
	}
}

type callingClient struct {
	*recorder
	once sync.Once
	call func(context.Context)
}

func (c *callingClient) SessionUpdate(ctx context.Context, n *SessionNotification) {
	c.once.Do(func() { c.call(ctx) })
	c.recorder.SessionUpdate(ctx, n)
}

func TestClientPanicBecomesErrorAnswer(t *testing.T) {
	cl := &panicky{recorder: newRecorder()}
	c, p := newPair(t, cl, nil)
	p.handshake(c, fullCaps)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}`)
	if m := p.recv(); m.Error == nil || m.Error.Code != CodeInternalError {
		t.Fatalf("panic answered %s", m.line)
	}
	p.send(chunkLineJSON("s", "alive"))
	cl.waitUpdates(t, 1)
}

type panicky struct{ *recorder }

func (p *panicky) ReadTextFile(context.Context, *ReadTextFileRequest) (*ReadTextFileResponse, error) {
	panic("boom")
}

func TestStreamEndDeliversQueuedMessages(t *testing.T) {
	rec := newRecorder()
	rec.block = make(chan struct{})
	c, p := newPair(t, rec, nil)
	for i := 0; i < 10; i++ {
		p.send(chunkLineJSON("s", fmt.Sprint(i)))
	}
	p.conn.Close()
	go func() {
		for i := 0; i < 10; i++ {
			rec.block <- struct{}{}
		}
	}()
	waitfor.Closed(t, c.Done(), "the connection to end")
	if rec.count() != 10 {
		t.Fatalf("delivered %d of 10 messages queued before the stream ended", rec.count())
	}
	if !errors.Is(c.Err(), ErrClosed) {
		t.Errorf("Err() = %v", c.Err())
	}
	if _, err := c.NewSession(waitfor.Context(t), &NewSessionRequest{Cwd: "/"}); err == nil {
		t.Error("call on a closed connection succeeded")
	}
}

// TestMalformedRequestIsAnswered checks that a malformed line whose request
// id a token scan recovers is answered with an error instead of leaving the
// agent waiting, that responses and id-less lines never are, and that each
// junk line still costs only itself.
func TestMalformedRequestIsAnswered(t *testing.T) {
	tests := []struct {
		name     string
		line     string
		wantID   string // "" when no answer is owed
		wantCode int
		wantText string
	}{
		{"number not JSON", `{"jsonrpc":"2.0","id":5,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a","line":Infinity}}`,
			"5", CodeParseError, "fs/read_text_file"},
		{"truncated, string id", `{"jsonrpc":"2.0","id":"r-1","method":"session/request_permission","params":{"sessionId":`,
			`"r-1"`, CodeParseError, "session/request_permission"},
		{"trailing junk", `{"jsonrpc":"2.0","id":6,"method":"x/y"} junk`, "6", CodeParseError, "x/y"},
		{"method not a string", `{"jsonrpc":"2.0","id":7,"method":7}`, "7", CodeInvalidRequest, "invalid request"},
		{"malformed result", `{"jsonrpc":"2.0","id":99,"result":{"x":Infinity}}`, "", 0, ""},
		{"malformed error", `{"jsonrpc":"2.0","id":8,"method":"x","error":{"code":NaN}}`, "", 0, ""},
		{"error key first", `{"error":{"code":1},"id":9,"method":"m","params":[}`, "", 0, ""},
		{"no id", `{"jsonrpc":"2.0","method":"fs/read_text_file","params":{"line":Infinity}}`, "", 0, ""},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"x","params":{"a":Infinity}}`, "", 0, ""},
		{"object id", `{"id":{"a":1},"method":"x","params":NaN}`, "", 0, ""},
		{"method after the error", `{"jsonrpc":"2.0","id":10,"params":{"a":Infinity},"method":"x"}`, "", 0, ""},
	}
	var mu sync.Mutex
	bad := 0
	c, p := newPair(t, newRecorder(), &ConnOptions{OnBadLine: func(BadLine) { mu.Lock(); bad++; mu.Unlock() }})
	p.handshake(c, fullCaps)
	defer func(outer *testing.T) { p.t = outer }(p.t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.t = t
			probe := fmt.Sprintf(`"probe-%d"`, i)
			p.send(tt.line)
			p.sendf(`{"jsonrpc":"2.0","id":%s,"method":"_probe/unknown","params":{}}`, probe)
			m := p.recv()
			if tt.wantID != "" {
				if string(m.ID) != tt.wantID || m.Error == nil || m.Error.Code != tt.wantCode || !strings.Contains(m.Error.Message, tt.wantText) {
					t.Fatalf("answer %s, want error %d naming %q for id %s", m.line, tt.wantCode, tt.wantText, tt.wantID)
				}
				m = p.recv()
			}
			// The probe's answer comes next: nothing else was answered and
			// the connection still serves requests.
			if string(m.ID) != probe || m.Error == nil || m.Error.Code != CodeMethodNotFound {
				t.Fatalf("got %s, want the probe's method-not-found answer", m.line)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if bad != len(tests) {
		t.Errorf("reported %d bad lines, want %d", bad, len(tests))
	}
	if c.Err() != nil {
		t.Fatalf("connection ended: %v", c.Err())
	}
}
