package acpclient

import (
	"encoding/json"

	"github.com/acphost/acphost/internal/wire/scan"
)

// rawSource is what a queue entry keeps so that the update object can be
// handed to a wire.Receiver as the agent sent it without decoding it twice
// on the hot path: the notification's params as received, or its whole
// line (inLine). Message chunks keep none: their events carry no raw
// bytes.
type rawSource struct {
	raw    []byte
	inLine bool
}

// update returns the update object of n, which src is the source of.
func (src *rawSource) update(n *SessionNotification) json.RawMessage {
	raw, inLine := src.raw, src.inLine
	if raw != nil && fastWire {
		if upd, ok := scan.LocateUpdate(raw, inLine); ok {
			return upd
		}
	}
	switch {
	case raw != nil && !inLine:
		var p struct {
			Update json.RawMessage `json:"update"`
		}
		if json.Unmarshal(raw, &p) == nil {
			return p.Update
		}
	case raw != nil:
		var l struct {
			Params struct {
				Update json.RawMessage `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal(raw, &l) == nil {
			return l.Params.Update
		}
	}
	upd, _ := json.Marshal(n.Update)
	return upd
}
