package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/acphost/acphost/acpclient"
)

// Bounds of what the inspector keeps per agent: the newest lines win.
const (
	traceLines  = 2000
	stderrLines = 500
	logLines    = 300
)

// traceLine is one line of the wire, as the library's wire trace logs it.
type traceLine struct {
	Time      time.Time `json:"time"`
	Dir       string    `json:"dir"` // "out" to the agent, "in" from it
	Line      string    `json:"line"`
	Size      int64     `json:"size"`
	Truncated bool      `json:"truncated,omitempty"`
}

// inspector keeps what the page's inspector panel shows of one agent: the
// wire trace, stderr and the library's other diagnostics, all of which
// arrive as records on the agent's logger (bridge.Config.Logger with
// WireTrace), and the initialize request, kept apart so it outlives the
// trace's bound.
type inspector struct {
	mu          sync.Mutex
	trace       []traceLine
	stderr      []string
	logs        []string
	initRequest string
	// initID is the id of the initialize request last sent while its
	// answer is awaited; initAnswer the answer's line.
	initID     json.RawMessage
	initAnswer string
}

// inspection is the inspector's state as the page gets it.
type inspection struct {
	Trace             []traceLine                   `json:"trace"`
	Stderr            []string                      `json:"stderr"`
	Logs              []string                      `json:"logs"`
	InitializeRequest string                        `json:"initializeRequest,omitempty"`
	InitializeAnswer  string                        `json:"initializeAnswer,omitempty"`
	Initialize        *acpclient.InitializeResponse `json:"initialize,omitempty"`
}

func (in *inspector) logger() *slog.Logger { return slog.New(inspectHandler{in: in}) }

func (in *inspector) snapshot() inspection {
	in.mu.Lock()
	defer in.mu.Unlock()
	return inspection{
		Trace:             append([]traceLine{}, in.trace...),
		Stderr:            append([]string{}, in.stderr...),
		Logs:              append([]string{}, in.logs...),
		InitializeRequest: in.initRequest,
		InitializeAnswer:  in.initAnswer,
	}
}

// keep appends v to a list bounded to limit entries.
func keep[T any](list []T, v T, limit int) []T {
	if len(list) >= limit {
		list = append(list[:0], list[len(list)-limit+1:]...)
	}
	return append(list, v)
}

// inspectHandler is the slog handler that feeds an inspector.
type inspectHandler struct {
	in    *inspector
	attrs []slog.Attr
}

func (h inspectHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h inspectHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return inspectHandler{in: h.in, attrs: append(append([]slog.Attr{}, h.attrs...), as...)}
}

// WithGroup keeps the attributes flat: the panel shows them as text.
func (h inspectHandler) WithGroup(string) slog.Handler { return h }

func (h inspectHandler) Handle(_ context.Context, r slog.Record) error {
	attrs := map[string]slog.Value{}
	var text strings.Builder
	for _, a := range h.attrs {
		fmt.Fprintf(&text, " %s=%v", a.Key, a.Value)
	}
	r.Attrs(func(a slog.Attr) bool {
		attrs[a.Key] = a.Value
		fmt.Fprintf(&text, " %s=%v", a.Key, a.Value)
		return true
	})
	in := h.in
	in.mu.Lock()
	defer in.mu.Unlock()
	switch r.Message {
	case acpclient.WireTraceIn, acpclient.WireTraceOut:
		l := traceLine{Time: r.Time, Dir: "in", Line: attrString(attrs, "line"), Size: attrs["size"].Int64(), Truncated: attrs["truncated"].Kind() == slog.KindBool}
		if r.Message == acpclient.WireTraceOut {
			l.Dir = "out"
		}
		in.initExchange(l)
		in.trace = keep(in.trace, l, traceLines)
	case acpclient.StderrLine:
		in.stderr = keep(in.stderr, attrString(attrs, "line"), stderrLines)
	default:
		in.logs = keep(in.logs, fmt.Sprintf("%s %s %s%s", r.Time.Format(time.TimeOnly), r.Level, r.Message, text.String()), logLines)
	}
	return nil
}

// attrString is a record's attribute as text, "" when it is missing.
func attrString(attrs map[string]slog.Value, key string) string {
	v, ok := attrs[key]
	if !ok {
		return ""
	}
	return v.String()
}

// initExchange keeps the initialize request and the agent's answer to it
// (the lines of each process start: a restarted agent is initialized
// again). Only lines sent while an answer is awaited are parsed.
func (in *inspector) initExchange(l traceLine) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	switch {
	case l.Dir == "out" && strings.Contains(l.Line, `"method":"initialize"`):
		if json.Unmarshal([]byte(l.Line), &msg) == nil && msg.Method == "initialize" {
			in.initRequest, in.initID, in.initAnswer = l.Line, msg.ID, ""
		}
	case l.Dir == "in" && in.initID != nil:
		if json.Unmarshal([]byte(l.Line), &msg) == nil && msg.Method == "" && bytes.Equal(msg.ID, in.initID) {
			in.initAnswer, in.initID = l.Line, nil
		}
	}
}
