package acpclient

import (
	"encoding/json"
	"io"
	"sync"
)

// defaultMaxLineBytes is the default cap on one incoming line. Lines carry
// whole images and replayed histories, so it is large; a line over the cap
// ends the connection with ErrLineTooLong.
const defaultMaxLineBytes = 256 << 20

// BadLine describes an incoming line that was skipped: not JSON, not a
// JSON-RPC message, or a response nobody waits for. The connection stays up.
type BadLine struct {
	// Reason says why the line was skipped.
	Reason string
	// Line is the start of the line (at most 1 KiB), for diagnostics.
	Line []byte
	// Size is the length of the whole line.
	Size int
}

const badLineQuote = 1 << 10

// envelope is the shape every JSON-RPC message shares. Params, result and
// error stay raw: they are decoded once the method is known. Params refers
// into the line rather than copying it (a write request's params are nearly
// the whole line); handleLine copies it when the line is not its to keep.
type envelope struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  rawRef          `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// writer serialises whole lines onto the agent's stdin.
type writer struct {
	mu sync.Mutex
	w  io.Writer
	// buf is reused between writes; guarded by mu.
	buf   []byte
	trace *tracer // nil without a wire trace
}

// writeLine writes one message as one compact line. json.Marshal never
// emits a raw newline, so the framing cannot be broken by content.
func (w *writer) writeJSON(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return w.writeLine(data)
}

func (w *writer) writeLine(data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.trace != nil {
		w.trace.line(WireTraceOut, data)
	}
	w.buf = append(append(w.buf[:0], data...), '\n')
	_, err := w.w.Write(w.buf)
	if cap(w.buf) > firstBufferSize { // an idle connection keeps no large buffer
		w.buf = nil
	}
	return err
}

// rawRef is a raw JSON value that refers to the decoded input instead of
// copying it. encoding/json hands UnmarshalJSON a slice of its input; were
// that ever a copy, rawRef would merely cost what json.RawMessage does.
type rawRef []byte

// UnmarshalJSON keeps data itself.
func (r *rawRef) UnmarshalJSON(data []byte) error {
	*r = data
	return nil
}

func quoteLine(line []byte) []byte {
	if len(line) > badLineQuote {
		line = line[:badLineQuote]
	}
	return append([]byte(nil), line...)
}
