package acpclient

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/acphost/acphost/internal/waitfor"
)

// TestErrorsNamePackageOnce checks that a call's error on a dead connection
// says "acpclient:" once, and still is ErrClosed.
func TestErrorsNamePackageOnce(t *testing.T) {
	c, p := newPair(t, newRecorder(), nil)
	p.handshake(c, fullCaps)
	p.conn.Close()
	waitfor.Closed(t, c.Done(), "the connection to end")
	_, err := c.Prompt(waitfor.Context(t), &PromptRequest{SessionID: "s", Prompt: []ContentBlock{TextBlock("hi")}})
	if !errors.Is(err, ErrClosed) || strings.Count(err.Error(), "acpclient:") != 1 || !strings.Contains(err.Error(), "session/prompt") {
		t.Fatalf("error %q: want ErrClosed, naming the package once", err)
	}
	tr := &CommandTransport{Path: "no-such-agent-anywhere"}
	if _, err := tr.Connect(context.Background()); !errors.Is(err, ErrAgentNotFound) || strings.Count(err.Error(), "acpclient:") != 1 {
		t.Fatalf("error %q: want ErrAgentNotFound, naming the package once", err)
	}
}
