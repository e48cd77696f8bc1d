package main

import (
	"io"

	"github.com/acphost/acphost/bridge"
)

// jsonOutput writes each event as one line of JSON: exactly json.Marshal of
// the bridge's Event, the form its journal and subscribers use too (see the
// bridge package doc, "Event JSON"). How a permission request was answered
// is not added here: the bridge reports it as a decision event of its own.
type jsonOutput struct {
	w    io.Writer
	line []byte // reused: one line per event
}

func newJSONOutput(w io.Writer) *jsonOutput { return &jsonOutput{w: w} }

func (o *jsonOutput) event(ev bridge.Event) { o.write(ev) }

// permission shows the request before it is answered, so that a program
// reading the lines sees it while acprun asks on the terminal.
func (o *jsonOutput) permission(ev bridge.Event, decide func() string) {
	o.write(ev)
	decide()
}

func (o *jsonOutput) finish() {}

func (o *jsonOutput) write(ev bridge.Event) {
	line, err := ev.AppendJSON(o.line[:0]) // the bytes of json.Marshal, encoded once
	if err != nil {
		// An Event always encodes; say so on the line rather than drop it.
		failed := bridge.Event{Bridge: ev.Bridge, Key: ev.Key, Session: ev.Session, Seq: ev.Seq, Pos: ev.Pos,
			Kind: bridge.KindError, Time: ev.Time, Err: err}
		line, _ = failed.AppendJSON(o.line[:0])
	}
	o.line = append(line, '\n')
	// A closed stdout is noticed by the exit status of whoever reads it.
	_, _ = o.w.Write(o.line)
	if cap(o.line) > 64<<10 {
		o.line = nil // one huge event does not pin its line
	}
}
