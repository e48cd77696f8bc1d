package bridge

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// TestConfigLoggerReachesConnAndTransport checks that Config.Logger with
// WireTrace shows the lines in and out and the agent's stderr, though
// neither the connection nor the transport was given a logger.
func TestConfigLoggerReachesConnAndTransport(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&logs, &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h, _ := newHostAndRecorder(t, nil)
	b, _ := startPlain(t, h, acptest.Script{OnStart: []acptest.Step{{Stderr: "hello from stderr"}}}, "", Config{Logger: logger, WireTrace: true})
	if _, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	b.Close()
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{acpclient.WireTraceOut, acpclient.WireTraceIn, "session/new", "hello from stderr"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}
}
