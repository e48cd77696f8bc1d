package acpclient

import "encoding/json"

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
		if upd, ok := locateUpdate(raw, inLine); ok {
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

// locateUpdate finds the update object in already validated JSON: a whole
// notification line (inLine) or its params. It walks the bytes once with the
// chunk scanner's lexer, where encoding/json would validate them again and
// then decode. It gives up (false) on a key that encoding/json might match
// to params or update other than byte for byte; the caller then decodes.
func locateUpdate(b []byte, inLine bool) (json.RawMessage, bool) {
	s := chunkScan{b: b}
	var found span
	ok := false
	var walk func(want string, last bool) bool
	walk = func(want string, last bool) bool {
		return s.object(func(key []byte, simple bool) bool {
			switch {
			case simple && string(key) == want:
				if last {
					found, ok = s.rawValue()
					return ok
				}
				if s.peek() != '{' {
					return false // the decoding path says what that means
				}
				return walk("update", true)
			case !simple || foldsToAny(key, []string{want}):
				return false
			}
			return s.skip()
		})
	}
	s.ws()
	var walked bool
	if inLine {
		walked = walk("params", false)
	} else {
		walked = walk("update", true)
	}
	if !walked || !ok {
		return nil, false
	}
	return b[found.start:found.end], true
}
