package acpclient

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// logRecords is a slog handler that keeps every record as text.
type logRecords struct {
	mu   sync.Mutex
	recs []string
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecords) WithGroup(string) slog.Handler            { return l }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%s", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	l.recs = append(l.recs, b.String())
	l.mu.Unlock()
	return nil
}

// waitFor waits for a record containing every one of parts.
func (l *logRecords) waitFor(t *testing.T, parts ...string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		for _, r := range l.recs {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(r, p)
			}
			if ok {
				l.mu.Unlock()
				return r
			}
		}
		l.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Fatalf("no record with %q in:\n%s", parts, strings.Join(l.recs, "\n"))
	return ""
}

// TestWireTraceLogsEveryLine checks the wire trace over a stream: lines out
// and in, skipped lines too, long lines cut with their size noted,
// credentials masked.
func TestWireTraceLogsEveryLine(t *testing.T) {
	logs := &logRecords{}
	c, p := newPair(t, newRecorder(), &ConnOptions{Logger: slog.New(logs), WireTrace: true})
	p.handshake(c, fullCaps)
	logs.waitFor(t, WireTraceOut, `"method":"initialize"`)
	logs.waitFor(t, WireTraceIn, `"protocolVersion":1`)
	p.send("this is not json")
	logs.waitFor(t, WireTraceIn, "line=this is not json", "size=16")
	long := strings.Repeat("x", 3*wireTraceBytes)
	p.send(chunkLineJSON("s", long))
	rec := logs.waitFor(t, WireTraceIn, "truncated=true", fmt.Sprintf("size=%d", len(chunkLineJSON("s", long))))
	if len(rec) > wireTraceBytes+200 {
		t.Fatalf("a long line is logged whole (%d bytes)", len(rec))
	}
	p.send(chunkLineJSON("s", "Authorization: Bearer abcdefgh12345678"))
	if rec := logs.waitFor(t, WireTraceIn, "Authorization"); strings.Contains(rec, "abcdefgh12345678") {
		t.Fatalf("a credential is in the trace: %s", rec)
	}
}

// TestLoggerCascadesToTheTransport checks that ConnOptions.Logger reaches a
// CommandTransport without a logger of its own (its stderr lines show), and
// that the wire trace masks the transport's own secrets.
func TestLoggerCascadesToTheTransport(t *testing.T) {
	const secret = "plain-looking-value-9931"
	logs := &logRecords{}
	tr := &CommandTransport{Path: "sh", Args: []string{"-c", `echo "on stderr" >&2; echo 'junk on stdout'; printf '{"jsonrpc":"2.0","method":"_x/n","params":{"v":"%s"}}\n' "$1"; cat >/dev/null`, "sh", secret},
		Redactor: &Redactor{Values: []string{secret}}}
	c, err := Connect(context.Background(), tr, newRecorder(), &ConnOptions{Logger: slog.New(logs), WireTrace: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close(); <-c.Done() }()
	logs.waitFor(t, StderrLine, "on stderr")
	logs.waitFor(t, WireTraceIn, "junk on stdout")
	if rec := logs.waitFor(t, WireTraceIn, "_x/n"); strings.Contains(rec, secret) || !strings.Contains(rec, "[REDACTED]") {
		t.Fatalf("trace record %s: the transport's secret is not masked", rec)
	}
	if tr.Logger != nil {
		t.Fatal("Connect changed the caller's transport")
	}
	own := &logRecords{}
	tr2 := &CommandTransport{Path: "sh", Logger: slog.New(own)}
	if got := tr2.WithDefaultLogger(slog.New(logs)); got != Transport(tr2) {
		t.Fatal("a transport with its own logger was given another")
	}
}
