package acpclient

import "log/slog"

// LogTransport is a Transport whose logger can be handed down from above:
// Connect gives it ConnOptions.Logger, and a bridge its own Logger, so one
// logger set at the top sees everything (stderr lines included) unless the
// transport was given its own. CommandTransport and SSHTransport implement
// it.
type LogTransport interface {
	Transport
	// WithDefaultLogger returns the transport itself when it has a logger
	// of its own, or else a copy that logs to l.
	WithDefaultLogger(l *slog.Logger) Transport
}

// WithDefaultLogger returns t when t.Logger is set, or a copy logging to l.
func (t *CommandTransport) WithDefaultLogger(l *slog.Logger) Transport {
	if t.Logger != nil || l == nil {
		return t
	}
	cp := *t
	cp.Logger = l
	return &cp
}

// WithDefaultLogger returns t when t.Logger is set, or a copy logging to l.
func (t *SSHTransport) WithDefaultLogger(l *slog.Logger) Transport {
	if t.Logger != nil || l == nil {
		return t
	}
	cp := *t
	cp.Logger = l
	return &cp
}

// wireTraceBytes is how much of a line the wire trace quotes; the rest is
// cut and the line's length noted.
const wireTraceBytes = 4 << 10

// Wire trace records: their message, and the attributes "line" (the text,
// cut at wireTraceBytes and redacted), "size" (the whole line's length in
// bytes) and, when cut, "truncated" (true).
const (
	WireTraceIn  = "acpclient: wire in"
	WireTraceOut = "acpclient: wire out"
)

// StderrLine is the message of the debug record a transport's Logger
// receives for each line the agent writes on stderr; its attribute "line"
// is the line, redacted. An app that shows an agent's stderr (an
// inspector) picks these records out of its logger by this message.
const StderrLine = "agent stderr"

// redacting is a stream that knows its own secrets (process and
// remoteProcess: their transport's Redactor).
type redacting interface{ Redact(s string) string }

// tracer logs the lines of a Conn's wire trace.
type tracer struct {
	logger *slog.Logger
	redact func(string) string
	// longest is the longest secret value, so that one straddling the cut
	// is masked whole before the line is cut.
	longest int
}

func newTracer(logger *slog.Logger, stream any) *tracer {
	t := &tracer{logger: logger, redact: (*Redactor)(nil).Redact}
	if r, ok := stream.(redacting); ok {
		t.redact = r.Redact
	}
	if r, ok := stream.(interface{ secrets() []string }); ok {
		for _, v := range r.secrets() {
			t.longest = max(t.longest, len(v))
		}
	}
	return t
}

// line logs one line going in or out. A nil tracer logs nothing.
func (t *tracer) line(msg string, line []byte) {
	if t == nil {
		return
	}
	window := line
	if len(window) > wireTraceBytes+t.longest {
		window = window[:wireTraceBytes+t.longest]
	}
	text := t.redact(string(window))
	attrs := []any{"size", len(line)}
	if len(line) > wireTraceBytes || len(text) > wireTraceBytes {
		text = text[:min(len(text), wireTraceBytes)]
		attrs = append(attrs, "truncated", true)
	}
	t.logger.Debug(msg, append([]any{"line", text}, attrs...)...)
}

// Redact masks the secrets the process's transport knows in s.
func (p *process) Redact(s string) string { return p.redactor.Redact(s) }

func (p *process) secrets() []string { return p.redactor.Values }

// Redact masks the secrets the remote process's transport knows in s.
func (p *remoteProcess) Redact(s string) string { return p.redactor.Redact(s) }

func (p *remoteProcess) secrets() []string { return p.redactor.Values }
