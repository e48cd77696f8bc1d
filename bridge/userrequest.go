package bridge

import (
	"context"
	"errors"
	"sync"
)

// ErrAlreadyAnswered is returned by the answer methods of PermissionRequest,
// ElicitationRequest and AuthRequest when the request was answered before:
// by the app, by a cancelled turn, by Bridge.Close, or by the agent giving
// up on it.
var ErrAlreadyAnswered = errors.New("bridge: request already answered")

// Causes of abandoned requests, besides a context's error and ErrClosed.
var (
	errTurnEnded   = errors.New("the turn ended")
	errAgentExited = errors.New("the agent process exited")
)

// userRequest is what every request that waits on the user shares
// (PermissionRequest, ElicitationRequest and AuthRequest embed it): it is
// answered once, Done closes with that answer, and while it waits (see
// Bridge.await) it is registered where a cancel or Close finds it and holds
// its turn's watchdog paused, since the user's thinking time is not the
// agent's silence.
type userRequest struct {
	once sync.Once
	done chan struct{}
	// release undoes await: unregisters the request and resumes the
	// watchdog. It is set before the request can be answered.
	release func()
	// record marks a request decoded from JSON (see ErrRequestRecord).
	record bool
}

func newUserRequest() userRequest { return userRequest{done: make(chan struct{})} }

// Done is closed once the request has been answered in any way.
func (r *userRequest) Done() <-chan struct{} { return r.done }

// settle runs answer if the request was not answered yet, and reports
// ErrAlreadyAnswered otherwise; a request the bridge did not hand out (a
// record, or a zero value) reports ErrRequestRecord.
func (r *userRequest) settle(answer func()) error {
	if r.record || r.done == nil {
		return ErrRequestRecord
	}
	err := ErrAlreadyAnswered
	r.once.Do(func() {
		err = nil
		if r.release != nil {
			r.release()
		}
		answer()
		close(r.done)
	})
	return err
}

func (r *userRequest) base() *userRequest { return r }

// waiter is a request waiting on the user, as await and the registries see
// it.
type waiter interface {
	base() *userRequest
	// abandon answers the request the way an unanswered one is answered
	// (cancelled, declined); cause says why nobody answered.
	abandon(cause error)
}

// await makes w wait on the user: it is registered with s (or with the
// bridge for a request outside any session) so that a cancelled or ended
// turn and Bridge.Close abandon it, s's running turn's watchdog is paused
// until the answer, and the end of ctx (the agent gave up, the connection
// closed) abandons it too. Call it before the request's event is emitted.
func (b *Bridge) await(ctx context.Context, s *Session, id string, w waiter) {
	reg := &b.pending
	var dog *watchdog
	if s != nil {
		reg = &s.pending
		s.mu.Lock()
		if s.turn != nil {
			dog = s.turn.watchdog
		}
		s.mu.Unlock()
	}
	if dog != nil {
		dog.pause()
	}
	r := w.base()
	r.release = func() {
		reg.remove(id)
		if dog != nil {
			dog.resume()
		}
	}
	reg.add(id, w)
	go func() {
		select {
		case <-ctx.Done():
			w.abandon(ctx.Err())
		case <-r.done:
		}
	}()
}

// pendingRequests are the requests of a session, or of a bridge, that wait
// on the user.
type pendingRequests struct {
	mu sync.Mutex
	m  map[string]waiter
}

func (p *pendingRequests) add(id string, w waiter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]waiter{}
	}
	p.m[id] = w
}

func (p *pendingRequests) remove(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, id)
}

func (p *pendingRequests) all() []waiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]waiter, 0, len(p.m))
	for _, w := range p.m {
		out = append(out, w)
	}
	return out
}

// abandonAll abandons every pending request, outside the lock: settling
// one unregisters it.
func (p *pendingRequests) abandonAll(cause error) {
	for _, w := range p.all() {
		w.abandon(cause)
	}
}
