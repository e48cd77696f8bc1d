package acpclient

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/acphost/acphost/internal/wire/scan"
)

// TextFileWriteLimiter is implemented by a TextFileWriter that caps the
// content it accepts. Conn asks it before decoding a write's content and
// refuses a larger write with -32602, so the content is never held in
// memory a second time only to be refused.
type TextFileWriteLimiter interface {
	// MaxTextFileWrite returns the largest content, in bytes, accepted
	// for the session; 0 or less means no cap.
	MaxTextFileWrite(sessionID string) int64
}

// writeTextFileParams is WriteTextFileRequest with the content left raw, so
// its decoded size can be measured first and the string built in one
// allocation of exactly that size.
type writeTextFileParams struct {
	SessionID string          `json:"sessionId"`
	Path      string          `json:"path"`
	Content   rawRef          `json:"content"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// serveWriteTextFile decodes and serves fs/write_text_file.
func (c *Conn) serveWriteTextFile(ctx context.Context, h TextFileWriter, m *inbound, reply func(any, error)) {
	var p writeTextFileParams
	if !c.decodeParams(m, &p) {
		return
	}
	// No leniency here, unlike elsewhere: taking content that is missing or
	// not a string for "" would empty the file.
	lit := bytes.TrimSpace(p.Content)
	if len(lit) < 2 || lit[0] != '"' {
		reply(nil, NewError(CodeInvalidParams, "fs/write_text_file %s: content must be a string; nothing was written", p.Path))
		return
	}
	if off := scan.BadUnicode(lit); off >= 0 {
		// encoding/json would write U+FFFD in place of these bytes: the file
		// would silently hold other text than the agent sent.
		reply(nil, NewError(CodeInvalidParams,
			"fs/write_text_file %s: content is not valid Unicode (invalid UTF-8 or an unpaired surrogate at byte %d of the JSON string); nothing was written",
			p.Path, off))
		return
	}
	n := scan.UnquotedLen(lit)
	if l, ok := h.(TextFileWriteLimiter); ok {
		if limit := l.MaxTextFileWrite(p.SessionID); limit > 0 && int64(n) > limit {
			reply(nil, NewError(CodeInvalidParams,
				"fs/write_text_file %s: content of %d bytes is over the limit of %d bytes; nothing was written",
				p.Path, n, limit))
			return
		}
	}
	req := &WriteTextFileRequest{SessionID: p.SessionID, Path: p.Path, Content: scan.Unquote(lit, n), Meta: p.Meta}
	reply(nil, h.WriteTextFile(ctx, req))
}

// serveReadTextFile serves fs/read_text_file. The reader owns the rule
// that text which is not UTF-8 is refused rather than served (fsroot's
// roots, which every bridge session reads through, check the whole file
// as it is read): encoding/json would replace bad bytes with U+FFFD.
func (c *Conn) serveReadTextFile(ctx context.Context, h TextFileReader, m *inbound, reply func(any, error)) {
	var req ReadTextFileRequest
	if !c.decodeParams(m, &req) {
		return
	}
	reply(h.ReadTextFile(ctx, &req))
}
