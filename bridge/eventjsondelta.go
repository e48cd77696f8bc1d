package bridge

import "strconv"

// appendDeltaJSON writes the JSON form of a text, thinking or user-text
// delta that carries nothing but the common keys, Text and MessageID, byte
// for byte as encoding/json writes it (TestDeltaJSONIsTheGeneralForm holds
// it to that, field by field). It reports false, having written nothing,
// for any other event: the general path then encodes it.
func appendDeltaJSON(b []byte, e *Event) ([]byte, bool) {
	if !isPlainDelta(e) {
		return b, false
	}
	start := len(b)
	b = append(b, `{"pos":`...)
	b = strconv.AppendUint(b, e.Pos, 10)
	b = append(b, `,"bridge":`...)
	b = appendJSONString(b, e.Bridge)
	if e.Key != "" {
		b = append(b, `,"key":`...)
		b = appendJSONString(b, e.Key)
	}
	if e.Session != "" {
		b = append(b, `,"session":`...)
		b = appendJSONString(b, e.Session)
	}
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	if e.Turn != 0 {
		b = append(b, `,"turn":`...)
		b = strconv.AppendUint(b, e.Turn, 10)
	}
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, string(e.Kind))
	b = append(b, `,"time":"`...)
	withTime, err := e.Time.AppendText(b)
	if err != nil {
		return b[:start], false // a year encoding/json refuses: let it say so
	}
	b = append(withTime, '"')
	if e.Replay {
		b = append(b, `,"replay":true`...)
	}
	if e.Late {
		b = append(b, `,"late":true`...)
	}
	if e.Text != "" {
		b = append(b, `,"text":`...)
		b = appendJSONString(b, e.Text)
	}
	if e.MessageID != "" {
		b = append(b, `,"messageId":`...)
		b = appendJSONString(b, e.MessageID)
	}
	return append(b, '}'), true
}

// isPlainDelta reports whether e is a delta with none of the fields the
// direct encoding leaves out.
func isPlainDelta(e *Event) bool {
	switch e.Kind {
	case KindText, KindThinking, KindUserText:
	default:
		return false
	}
	return e.Tool == nil && e.Permission == nil && e.Elicitation == nil && e.Plan == nil && e.Usage == nil &&
		e.Compaction == nil && e.AgentMode == "" && e.ConfigOptions == nil && e.Models == nil && e.Commands == nil &&
		e.SessionInfo == nil && e.SessionReady == nil && e.StopReason == "" && e.Auth == nil && e.Todos == nil &&
		e.Terminal == nil && e.Decision == nil && e.Authority == nil && e.Changes == nil && e.Err == nil && e.Method == "" && e.Raw == nil &&
		e.Queue == nil && e.Steer == "" && e.Plans == nil && e.Content == nil && e.ContentDropped == 0 && e.Notice == nil
}
