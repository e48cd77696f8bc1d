package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/acphost/acphost/acpclient"
)

// verboseHandler prints the library's diagnostics on w as text, except the
// wire trace, whose lines it prints raw ("-> " out to the agent, "<- " in
// from it), so they read, and grep, as the JSON they are.
type verboseHandler struct {
	slog.Handler
	mu *sync.Mutex
	w  io.Writer
}

func newVerboseLogger(w io.Writer) *slog.Logger {
	mu := &sync.Mutex{}
	text := slog.NewTextHandler(lockedWriter{mu, w}, &slog.HandlerOptions{Level: slog.LevelDebug})
	return slog.New(verboseHandler{Handler: text, mu: mu, w: w})
}

func (h verboseHandler) Handle(ctx context.Context, r slog.Record) error {
	arrow := map[string]string{acpclient.WireTraceIn: "<- ", acpclient.WireTraceOut: "-> "}[r.Message]
	if arrow == "" {
		return h.Handler.Handle(ctx, r)
	}
	var line, note string
	var size int64
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "line":
			line = a.Value.String()
		case "size":
			size = a.Value.Int64()
		case "truncated":
			note = "…"
		}
		return true
	})
	if note != "" {
		note = fmt.Sprintf(" … (%d bytes)", size)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := fmt.Fprintf(h.w, "%s%s%s\n", arrow, line, note)
	return err
}

func (h verboseHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return verboseHandler{Handler: h.Handler.WithAttrs(as), mu: h.mu, w: h.w}
}

func (h verboseHandler) WithGroup(name string) slog.Handler {
	return verboseHandler{Handler: h.Handler.WithGroup(name), mu: h.mu, w: h.w}
}

// lockedWriter serialises the text handler's writes with the raw lines.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
