package main

import (
	"encoding/json"
	"io"

	"github.com/acphost/acphost/bridge"
)

// jsonOutput writes each event as one line of JSON: exactly json.Marshal of
// the bridge's Event, the form its journal and subscribers use too (see the
// bridge package doc, "Event JSON"). How a permission request was answered
// is not added here: the bridge reports it as a decision event of its own.
type jsonOutput struct {
	w io.Writer
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
	line, err := json.Marshal(ev)
	if err != nil {
		// An Event always encodes; say so on the line rather than drop it.
		line, _ = json.Marshal(bridge.Event{Bridge: ev.Bridge, Key: ev.Key, Session: ev.Session, Seq: ev.Seq, Pos: ev.Pos,
			Kind: bridge.KindError, Time: ev.Time, Err: err})
	}
	// A closed stdout is noticed by the exit status of whoever reads it.
	_, _ = o.w.Write(append(line, '\n'))
}
