package acpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ConnOptions configures a Conn. The zero value is ready to use.
type ConnOptions struct {
	// MaxLineBytes caps one incoming line (default 256 MiB).
	MaxLineBytes int
	// MaxQueuedBytes is how much received but undelivered data may pile up
	// while the Client is slow before the Conn stops reading from the agent
	// (default 64 MiB). The agent then blocks on its stdout: backpressure,
	// never loss. A queued message counts what it holds: its line's bytes,
	// decoded copies of them, and a few hundred bytes of decoded values.
	MaxQueuedBytes int
	// Budget, when set, also bounds this Conn's queued data together with
	// that of every other Conn sharing it (see QueueBudget for the
	// fairness rule), so many agents need not each be allowed
	// MaxQueuedBytes.
	Budget *QueueBudget
	// OnBadLine, if set, is told about every skipped incoming line. It is
	// called on the read goroutine and must not block.
	OnBadLine func(BadLine)
	// Logger receives debug and warning records (default: discard).
	// Connect also hands it to a LogTransport that has no logger of its
	// own, so the agent's stderr lines show there too.
	Logger *slog.Logger
	// WireTrace logs every line in and out on Logger at debug level
	// (WireTraceIn, WireTraceOut): the lines that are skipped too, cut at
	// 4 KiB with their length noted, and redacted (the generic
	// credential shapes, and the secrets of the stream's transport when it
	// is a Process or a RemoteProcess).
	WireTrace bool
	// ExitWait is how long a Conn whose stream ended waits for the agent
	// process to exit, to report its exit status and stderr (default 2s).
	ExitWait time.Duration
}

// Conn is a connection to one ACP agent. Its typed methods send the
// client→agent calls; a Client serves the agent→client side. A Conn is safe
// for concurrent use.
type Conn struct {
	client  Client
	opts    ConnOptions
	logger  *slog.Logger
	rwc     io.ReadWriteCloser
	lines   *lineReader
	chunks  chunkDecoder // the read goroutine's
	batch   readBatch    // the read goroutine's
	out     *writer
	queue   *queue
	files   fileCalls
	trace   *tracer // nil without WireTrace
	nextID  atomic.Uint64
	ctx     context.Context // cancelled when the connection ends
	cancel  context.CancelFunc
	done    chan struct{} // closed when the read and dispatch loops have ended and the transport is closed
	readEnd chan struct{} // closed when the read loop has ended
	// rwcClosed is closed when closing the transport has returned: for a
	// process, once it has exited and been reaped.
	rwcClosed chan struct{}

	mu         sync.Mutex
	calls      map[uint64]*outCall // our requests still unanswered, by id
	callsEnded bool                // no answer can come any more
	inflight   map[string]*inboundRequest
	err        error
	initResp   *InitializeResponse

	closeOnce sync.Once
}

// dispatchKey marks contexts handed to Client methods, so calls made from
// inside them do not wait for the dispatch goroutine they are running on.
type dispatchKey struct{}

// NewConn starts a Conn over an established byte stream to an agent (for
// example the agent's stdin and stdout). Call Initialize next.
func NewConn(rwc io.ReadWriteCloser, client Client, opts *ConnOptions) *Conn {
	c := &Conn{client: client, rwc: rwc, done: make(chan struct{}), readEnd: make(chan struct{}), rwcClosed: make(chan struct{}),
		calls: map[uint64]*outCall{}, inflight: map[string]*inboundRequest{}}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.MaxLineBytes <= 0 {
		c.opts.MaxLineBytes = defaultMaxLineBytes
	}
	if c.opts.MaxQueuedBytes <= 0 {
		c.opts.MaxQueuedBytes = 64 << 20
	}
	if c.opts.ExitWait <= 0 {
		c.opts.ExitWait = 2 * time.Second
	}
	c.logger = c.opts.Logger
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.lines = newLineReader(rwc, c.opts.MaxLineBytes)
	c.out = &writer{w: rwc}
	if c.opts.WireTrace {
		c.trace = newTracer(c.logger, rwc)
		c.out.trace = c.trace
	}
	c.queue = newQueue(c.opts.MaxQueuedBytes, c.opts.Budget)
	c.queue.onWait = c.lines.park // only the read loop pushes what may wait
	_, c.chunks.scan.Lean = client.(receiver)
	go c.readLoop()
	go func() {
		c.dispatchLoop()
		// The dispatcher, once drained, is also what waits for the rest of
		// the connection to end: a goroutine of its own would only wait.
		<-c.readEnd
		c.queue.finish()
		<-c.rwcClosed
		close(c.done)
	}()
	return c
}

// Connect starts the transport and returns a Conn over it.
func Connect(ctx context.Context, t Transport, client Client, opts *ConnOptions) (*Conn, error) {
	if lt, ok := t.(LogTransport); ok && opts != nil && opts.Logger != nil {
		t = lt.WithDefaultLogger(opts.Logger)
	}
	rwc, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return NewConn(rwc, client, opts), nil
}

// Done is closed when the connection has ended, every received message has
// been delivered to the Client and the transport is closed: for an agent
// process, once it has exited and been reaped, however the connection ended
// (Close, the end of its output, a line over the cap).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended (nil while it is up). It satisfies
// errors.Is(err, ErrClosed); for an agent process that exited it also wraps
// an *ExitError quoting the process's stderr.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close ends the connection and the transport under it (for a process:
// stdin closed, then SIGTERM, then SIGKILL) and returns once the transport
// is closed: for a process, once it has exited, also when the connection had
// already ended and its shutdown was under way. Messages already received
// are still delivered; Done reports when that is over. Close may be called
// from a Client method.
func (c *Conn) Close() error {
	c.setErr(nil)
	err := c.shutdown()
	<-c.readEnd
	<-c.rwcClosed
	return err
}

// shutdown fails the calls still awaiting answers and closes the transport.
// Only the first call closes it, and returns what closing it returned.
func (c *Conn) shutdown() error {
	c.endCalls()
	var err error
	c.closeOnce.Do(func() {
		defer close(c.rwcClosed)
		c.cancel()
		err = c.rwc.Close()
	})
	return err
}

// closedError is the error of an ended connection: it is ErrClosed, and
// unwraps to the cause when there is one.
type closedError struct{ cause error }

func (e *closedError) Error() string {
	if e.cause == nil {
		return ErrClosed.Error()
	}
	return ErrClosed.Error() + ": " + e.cause.Error()
}
func (e *closedError) Is(target error) bool { return target == ErrClosed }
func (e *closedError) Unwrap() error        { return e.cause }

// setErr records the first reason the connection ended.
func (c *Conn) setErr(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = &closedError{cause}
	}
}

// call sends a request and waits for its response, decoding the result
// leniently into result (which may be nil). On return, every message the
// agent sent before the response has been delivered to the Client.
func (c *Conn) call(ctx context.Context, method string, params, result any) error {
	return c.callHook(ctx, method, params, result, nil)
}

// callHook is call with a hook run in stream order when the answer arrives
// (see send).
func (c *Conn) callHook(ctx context.Context, method string, params, result any, hook func(json.RawMessage, *Error)) error {
	if ctx.Value(dispatchKey{}) != nil {
		c.queue.setExempt(1)
		defer c.queue.setExempt(-1)
	}
	oc, id, err := c.send(method, params, hook)
	if err != nil {
		return c.drainOnClose(ctx, err)
	}
	err = oc.wait(ctx)
	if err != nil && ctx.Err() != nil && c.Err() == nil {
		// Tell the agent we gave up; its late answer is absorbed. The
		// write happens in the background so a stalled agent cannot hold
		// up the caller; it ends when written or when the connection
		// closes.
		go c.Notify(context.Background(), "$/cancel_request", map[string]uint64{"requestId": id})
		return fmt.Errorf("acpclient: %s: %w", method, ctx.Err())
	}
	raw, err := c.answer(ctx, method, oc, err)
	if err != nil {
		return err
	}
	if result != nil && len(raw) > 0 {
		if err := lenientUnmarshal(raw, result); err != nil {
			return fmt.Errorf("acpclient: %s: decoding result: %w", method, err)
		}
	}
	return nil
}

// send registers a request and writes it, with a hook run in stream order
// when the answer arrives (or none).
func (c *Conn) send(method string, params any, hook func(json.RawMessage, *Error)) (*outCall, uint64, error) {
	id := c.nextID.Add(1)
	oc, err := c.register(id, hook)
	if err == nil {
		err = c.out.writeJSON(&wireRequest{JSONRPC: "2.0", ID: &id, Method: method, Params: params})
		if err != nil {
			c.unregister(id)
		}
	}
	if err != nil {
		return nil, id, c.callError(method, err)
	}
	return oc, id, nil
}

// answer turns what waiting for a call gave into its result or its error.
// An answer, an error answer too, keeps the ordering promise: the caller
// sees it only once everything the agent sent before it has been delivered.
func (c *Conn) answer(ctx context.Context, method string, oc *outCall, waitErr error) (json.RawMessage, error) {
	if waitErr != nil {
		return nil, c.drainOnClose(ctx, c.callError(method, waitErr))
	}
	c.awaitBarrier(ctx, oc.barrier)
	if oc.err != nil {
		return nil, &CallError{Method: method, Err: oc.err}
	}
	return oc.result, nil
}

// drainOnClose keeps the ordering promise when a call fails because the
// connection ended: the caller sees the failure only after everything the
// agent sent before it died has been delivered (a host reports a crashed
// turn after the turn's last output, not before). Inside a Client method the
// wait would never end, so it is skipped there.
func (c *Conn) drainOnClose(ctx context.Context, err error) error {
	if errors.Is(err, ErrClosed) && ctx.Value(dispatchKey{}) == nil {
		select {
		case <-c.done:
		case <-ctx.Done():
		}
	}
	return err
}

// callError names the method in a failed call's error; a call failed by a
// dead connection reports the reason it died (not "broken pipe").
func (c *Conn) callError(method string, err error) error {
	if errors.Is(err, errCallsEnded) || c.Err() != nil || isWriteError(err) {
		// A write to a dead agent fails before the read loop has seen EOF;
		// wait for it so the caller learns why the agent went away.
		select {
		case <-c.readEnd:
		case <-time.After(c.opts.ExitWait + time.Second):
		}
		if cerr := c.Err(); cerr != nil {
			return fmt.Errorf("acpclient: %s: %w", method, cerr)
		}
		return fmt.Errorf("acpclient: %s: %w", method, &closedError{err})
	}
	return fmt.Errorf("acpclient: %s: %w", method, err)
}

func isWriteError(err error) bool {
	var pe interface{ Timeout() bool }
	return errors.Is(err, io.ErrClosedPipe) || errors.As(err, &pe) || errors.Is(err, io.EOF)
}

// awaitBarrier waits until the dispatcher has delivered target messages:
// those the agent sent before an answer.
func (c *Conn) awaitBarrier(ctx context.Context, target uint64) {
	if ctx.Value(dispatchKey{}) != nil {
		// Called from a Client method: the messages before the response
		// include the one being handled, so waiting would never end.
		return
	}
	select {
	case <-c.queue.reached(target):
	case <-ctx.Done():
	}
}

// Call sends any request, such as a vendor method ("session/compact"), and
// decodes the result into result (a pointer, or nil to discard it).
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	return c.call(ctx, method, params, result)
}

// CallThen is Call with a hook in stream order, for a request whose
// answer must be reported where it sits among the agent's messages (text
// steered into a running turn, say): then runs on the dispatch goroutine
// exactly where the answer arrives, after every message the agent sent
// before it and before any it sent after, with the raw result or the
// error answer as a *CallError. It runs for an answer that arrives after
// ctx gave up too (the agent did answer); it is not called when no answer
// arrives (the connection ended).
func (c *Conn) CallThen(ctx context.Context, method string, params, result any, then func(json.RawMessage, error)) error {
	return c.callHook(ctx, method, params, result, func(raw json.RawMessage, e *Error) {
		if e != nil {
			then(nil, &CallError{Method: method, Err: e})
			return
		}
		then(raw, nil)
	})
}

// Notify sends a notification, such as a vendor one.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	if err := c.notify(method, params); err != nil {
		return c.callError(method, err)
	}
	return nil
}

// notify writes a notification, unless the connection has ended.
func (c *Conn) notify(method string, params any) error {
	c.mu.Lock()
	ended := c.callsEnded
	c.mu.Unlock()
	if ended {
		return errCallsEnded
	}
	return c.out.writeJSON(&wireRequest{JSONRPC: "2.0", Method: method, Params: params})
}

// idKey is the map key of an agent's request id: its JSON text.
func idKey(id json.RawMessage) string { return string(id) }

// parseOurID reads the id of a response to one of our requests.
func parseOurID(id json.RawMessage) (uint64, bool) {
	n, err := strconv.ParseUint(string(id), 10, 64)
	return n, err == nil
}
