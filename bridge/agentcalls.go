package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/acphost/acphost/acpclient"
)

// The sessions a Bridge knows by their agent ids, and the calls the agent
// makes to the client, each routed to the session it names.

// forget removes a closed (or never opened) session from the bridge, with
// any updates still held for it. routeMu makes sure no update is being
// delivered to it meanwhile.
func (b *Bridge) forget(s *Session) {
	b.routeMu.Lock()
	defer b.routeMu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open[s.key] == s {
		delete(b.open, s.key)
	}
	if s.id != "" && b.sessions[s.id] == s {
		delete(b.sessions, s.id)
		b.claimEarlyLocked(s.id)
	}
}

// register makes a session known and replays updates that arrived for it
// before its id was (updates before session/new answers). The bridge lock
// is held throughout, so they stay ahead of any later update.
func (b *Bridge) register(s *Session) {
	b.routeMu.Lock()
	defer b.routeMu.Unlock()
	b.mu.Lock()
	b.sessions[s.id] = s
	early := b.claimEarlyLocked(s.id)
	b.mu.Unlock()
	for _, u := range early {
		s.handleUpdate(u.Note, u.Raw, b.clock.Now())
	}
}

func (b *Bridge) unregisterSession(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.sessions, id)
}

// SessionUpdate delivers one update as a run of one (see Updates). The
// connection hands the bridge runs; this serves the Client interface.
func (c *agentClient) SessionUpdate(ctx context.Context, n *acpclient.SessionNotification) {
	u := runUpdate{Note: n}
	if unk, ok := n.Update.(*acpclient.UnknownUpdate); ok {
		u.Raw = unk.Raw
	}
	c.Updates(ctx, []runUpdate{u})
}

// Updates delivers a run of updates that arrived back to back, reading
// the clock once for the run: its text events share the run's time, which
// is also the watchdog's sign of life. A run is consecutive pieces of one
// session's streamed messages, or one other notification (see
// wire.Receiver), so the time is that of its delivery. Consecutive text deltas of
// one session in it are emitted together (routeRun), under one lock of the
// session and one of the queue. routeMu, not mu, is held while the run is
// delivered (which may wait on a slow consumer): register's replay of
// early updates cannot interleave with it, and the app can still query the
// bridge meanwhile.
func (c *agentClient) Updates(ctx context.Context, run []runUpdate) {
	b := c.b
	b.routeMu.Lock()
	defer b.routeMu.Unlock()
	b.routeRun(run, b.clock.Now())
}

func (c *agentClient) RequestPermission(ctx context.Context, req *acpclient.RequestPermissionRequest, reply func(*acpclient.RequestPermissionResponse, error)) {
	s := c.b.session(req.SessionID)
	if s == nil {
		reply(acpclient.PermissionCancelled(), nil) // fail closed
		return
	}
	s.auth.handlePermission(ctx, req, reply)
}

func (c *agentClient) ReadTextFile(ctx context.Context, req *acpclient.ReadTextFileRequest) (*acpclient.ReadTextFileResponse, error) {
	s := c.b.session(req.SessionID)
	if s == nil {
		return nil, acpclient.NewError(acpclient.CodeInvalidParams, "unknown session %q", req.SessionID)
	}
	return s.files.readTextFile(ctx, req)
}

func (c *agentClient) WriteTextFile(ctx context.Context, req *acpclient.WriteTextFileRequest) error {
	s := c.b.session(req.SessionID)
	if s == nil {
		return acpclient.NewError(acpclient.CodeInvalidParams, "unknown session %q", req.SessionID)
	}
	return s.files.writeTextFile(ctx, req)
}

func (c *agentClient) HandleExtension(ctx context.Context, method string, params json.RawMessage) (any, error) {
	return nil, acpclient.NewError(acpclient.CodeMethodNotFound, "method not found: %s", method)
}

// HandleExtensionNotification turns vendor notifications into events: the
// provider's mapping first, else an ext event.
func (c *agentClient) HandleExtensionNotification(ctx context.Context, method string, params json.RawMessage) {
	b := c.b
	if b.provider.Notification != nil {
		if sid, events, handled := b.provider.Notification(method, params); handled {
			s := b.session(sid)
			for _, ev := range events {
				if s != nil {
					s.emitProviderEvent(ev)
				} else {
					ev.Session = sid
					b.emit(ev)
				}
			}
			return
		}
	}
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(params, &p)
	ev := Event{Kind: KindExt, Method: method, Raw: params}
	if s := b.session(p.SessionID); s != nil {
		s.emitFromAgent(ev)
		return
	}
	ev.Session = p.SessionID
	b.emit(ev)
}

// elicitingClient is the agent client of a bridge whose app renders
// elicitations; being a separate type keeps the capability unadvertised
// otherwise.
type elicitingClient struct {
	*agentClient
	urls urlElicitations
}

func (c *elicitingClient) ElicitationModes() []string { return c.b.cfg.ElicitationModes }

// CreateElicitation turns the agent's question into an elicitation event.
// While it waits, the session's watchdog is paused: the user is thinking.
func (c *elicitingClient) CreateElicitation(ctx context.Context, req *acpclient.CreateElicitationRequest, reply func(*acpclient.CreateElicitationResponse, error)) {
	b := c.b
	s := b.session(req.SessionID)
	id := fmt.Sprintf("ask-%d", b.permSeq.Add(1))
	q := &ElicitationRequest{userRequest: newUserRequest(), ID: id, Message: req.Message, Mode: req.Mode,
		Schema: req.RequestedSchema, URL: req.URL, ElicitationID: req.ElicitationID, ToolCallID: req.ToolCallID,
		answer: func(resp *acpclient.CreateElicitationResponse) { reply(resp, nil) }}
	b.await(ctx, s, id, q)
	c.urls.add(q, s)
	ev := Event{Kind: KindElicitation, Elicitation: q}
	if s != nil {
		s.emitFromAgent(ev)
		return
	}
	b.emit(ev) // a question outside any session, e.g. while signing in
}

// CompleteElicitation closes the url elicitation the agent names: a
// request still waiting is settled as accepted (the user did what it
// asked, elsewhere), and an elicitation_complete event carrying the
// request tells the UI. An id the bridge does not know is passed on as ext.
func (c *elicitingClient) CompleteElicitation(ctx context.Context, n *acpclient.CompleteElicitationNotification) {
	u, ok := c.urls.take(n.ElicitationID)
	if !ok {
		raw, _ := json.Marshal(n)
		c.b.emit(Event{Kind: KindExt, Method: "elicitation/complete", Raw: raw})
		return
	}
	// Settling fails only when the request was answered already.
	_ = u.q.settle(Decision{Outcome: "accepted", By: byHost, Rule: "the agent reported it complete"},
		&acpclient.CreateElicitationResponse{Action: "accept"})
	ev := Event{Kind: KindElicitationComplete, Elicitation: u.q}
	if u.s != nil {
		u.s.emitFromAgent(ev)
		return
	}
	c.b.emit(ev)
}

// withTerminals returns served with the terminal methods when the bridge
// has Config.Terminals.
func (b *Bridge) withTerminals(served acpclient.Client, client *agentClient) acpclient.Client {
	if b.cfg.Terminals == nil {
		return served
	}
	ts := &terminalServer{c: client}
	if e, ok := served.(*elicitingClient); ok {
		return struct {
			*elicitingClient
			*terminalServer
		}{e, ts}
	}
	return struct {
		*agentClient
		*terminalServer
	}{client, ts}
}

// urlElicitationsKept bounds the url elicitations a bridge remembers for
// their completion: an agent that never completes them cannot grow it.
const urlElicitationsKept = 64

// urlElicitations are the url elicitations of one agent connection that
// the agent may still report complete, oldest first.
type urlElicitations struct {
	mu      sync.Mutex
	waiting []urlElicitation
}

type urlElicitation struct {
	q *ElicitationRequest
	s *Session // nil outside any session
}

func (u *urlElicitations) add(q *ElicitationRequest, s *Session) {
	if q.Mode != "url" || q.ElicitationID == "" {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.waiting) == urlElicitationsKept {
		u.waiting = slices.Delete(u.waiting, 0, 1)
	}
	u.waiting = append(u.waiting, urlElicitation{q, s})
}

func (u *urlElicitations) take(id string) (urlElicitation, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	i := slices.IndexFunc(u.waiting, func(w urlElicitation) bool { return w.q.ElicitationID == id })
	if i < 0 {
		return urlElicitation{}, false
	}
	w := u.waiting[i]
	u.waiting = slices.Delete(u.waiting, i, i+1)
	return w, true
}
