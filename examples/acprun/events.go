package main

import (
	"bufio"
	"context"
	"io"
	"slices"

	"github.com/acphost/acphost/bridge"
)

// hostOptions configure the Host whose events acprun shows. acprun reads
// them from Host.Events and never subscribes, so the tail of events a Host
// keeps in memory for subscribers (up to 8 MiB by default, and
// twice that to the garbage collector) would only be held: it is cut to
// the one newest event a Host always keeps (a 200,000-chunk flood peaked
// 4 MiB lower, in 29 MiB instead of 33).
//
// The Host's queues are bounded by hostQueueBytes.
func hostOptions(db bridge.Journal) *bridge.HostOptions {
	return &bridge.HostOptions{Journal: db, SubscriberTail: 1, MaxQueuedBytes: hostQueueBytes}
}

// hostQueueBytes is acprun's HostOptions.MaxQueuedBytes. The default (8
// MiB) is sized for a Host of many agents; acprun runs one, which floods
// as fast through 1 MiB of queues. Under a flood the queues fill to their
// bound, and memory the process has not touched yet costs a page fault per
// 4 KiB, which on some virtual machines takes longer than the bytes' whole
// way through acprun (12 µs measured on the one the figures come
// from). With 1 MiB a 200,000-chunk acprun --events flood, whole process,
// took 0.89-0.95x as long and peaked at 24 MiB instead of 28-29 (medians
// of 20 alternate pairs against 8 MiB, in two runs).
const hostQueueBytes = 1 << 20

// eventsBuffer is how much of the --events lines is gathered into one
// write while events follow each other without a pause.
const eventsBuffer = 64 << 10

// jsonOutput writes each event as one line of JSON: exactly json.Marshal of
// the bridge's Event, the form its journal and subscribers use too (see the
// bridge package doc, "Event JSON"). How a permission request was answered
// is not added here: the bridge reports it as a decision event of its own.
//
// Lines are buffered: a flood costs a write per buffer, not per event.
// flush writes them out; relayEvents calls it whenever no further event is
// ready, permission before it asks, finish at the end, so a program that
// reads the lines live never waits for more events to see one.
type jsonOutput struct {
	w    *bufio.Writer
	line []byte // reused: one line per event
}

func newJSONOutput(w io.Writer) *jsonOutput {
	return &jsonOutput{w: bufio.NewWriterSize(w, eventsBuffer)}
}

func (o *jsonOutput) event(ev bridge.Event) { o.write(ev) }

// permission shows the request before it is answered, so that a program
// reading the lines sees it while acprun asks on the terminal.
func (o *jsonOutput) permission(ev bridge.Event, decide func() string) {
	o.write(ev)
	o.flush()
	decide()
}

func (o *jsonOutput) finish() { o.flush() }

// flush writes out the buffered lines. A closed stdout is noticed by the
// exit status of whoever reads it.
func (o *jsonOutput) flush() { _ = o.w.Flush() }

func (o *jsonOutput) write(ev bridge.Event) {
	line, err := ev.AppendJSON(o.line[:0]) // the bytes of json.Marshal, encoded once
	if err != nil {
		// An Event always encodes; say so on the line rather than drop it.
		failed := bridge.Event{Bridge: ev.Bridge, Key: ev.Key, Session: ev.Session, Seq: ev.Seq, Pos: ev.Pos,
			Kind: bridge.KindError, Time: ev.Time, Err: err}
		line, _ = failed.AppendJSON(o.line[:0])
	}
	o.line = append(line, '\n')
	_, _ = o.w.Write(o.line) // a failed write is kept by the bufio.Writer and seen as above
	if cap(o.line) > eventsBuffer {
		o.line = nil // one huge event does not pin its line
	}
}

// flusher is an output that buffers what it shows.
type flusher interface{ flush() }

// relayEvents calls show for each event of events until it is closed.
// When no event is ready, it flushes out (when out buffers) before it
// waits: what was shown reaches the reader as soon as the stream pauses.
func relayEvents(events <-chan bridge.Event, out output, show func(bridge.Event)) {
	buffered, _ := out.(flusher)
	for {
		var ev bridge.Event
		var ok bool
		select {
		case ev, ok = <-events:
		default:
			if buffered != nil {
				buffered.flush()
			}
			ev, ok = <-events
		}
		if !ok {
			return
		}
		show(ev)
	}
}

// showEvents shows host's events on out until the host shuts down,
// answering the permission requests the policy left open with approve and
// sign-ins with auth, and handing each event, once shown, to note when it
// is set. The returned finish shuts the host down, waits until every
// event is shown, flushes out, then closes closers, the last first.
func showEvents(host *bridge.Host, out output, approve *approver, auth *signer, note func(bridge.Event), closers *[]io.Closer) (finish func()) {
	shown := make(chan struct{})
	go func() {
		defer close(shown)
		relayEvents(host.Events(), out, func(ev bridge.Event) {
			switch {
			case ev.Kind == bridge.KindPermission && !answered(ev.Permission):
				out.permission(ev, func() string { return approve.decide(ev.Permission, toolTitle(ev.Tool)) })
			case ev.Kind == bridge.KindAuthRequired && ev.Auth != nil:
				out.event(ev)
				auth.answer(ev.Auth)
			default:
				out.event(ev) // an answered permission: its decision event follows
			}
			if note != nil {
				note(ev)
			}
		})
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		host.Shutdown(ctx)
		<-shown
		out.finish()
		for _, c := range slices.Backward(*closers) {
			c.Close()
		}
	}
}
