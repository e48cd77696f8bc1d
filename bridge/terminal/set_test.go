package terminal_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge/terminal"
)

// fakeOwner records a terminal's events and says which row shows it.
type fakeOwner struct {
	mu     sync.Mutex
	row    string
	events chan *terminal.Output
}

func (o *fakeOwner) Refuse() error { return nil }
func (o *fakeOwner) Printed()      {}
func (o *fakeOwner) Row(string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.row
}
func (o *fakeOwner) Emit(out *terminal.Output) { o.events <- out }
func (o *fakeOwner) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

func (o *fakeOwner) next(t *testing.T, what string) *terminal.Output {
	t.Helper()
	select {
	case out := <-o.events:
		return out
	case <-time.After(10 * time.Second):
		t.Fatalf("no terminal event: waited for %s", what)
		return nil
	}
}

// TestSetSendsOutputAgainForTheRowThatNamesIt: a command that printed and
// ended before any tool call named its terminal has its events out with no
// row; once a row names it (Placed), its output and exit go out again for
// that row, marked Reset, and only then.
func TestSetSendsOutputAgainForTheRowThatNamesIt(t *testing.T) {
	ctx := context.Background()
	var set terminal.Set
	defer set.Close()
	owner := &fakeOwner{events: make(chan *terminal.Output, 16)}
	req := &acpclient.CreateTerminalRequest{SessionID: "s1", Command: "echo", Args: []string{"built"}}
	dir := func(context.Context) (string, error) { return t.TempDir(), nil }
	resp, err := set.Create(ctx, owner, &terminal.Options{}, set.Runner(terminal.Local{}), req, dir)
	if err != nil {
		t.Fatal(err)
	}
	var data string
	for {
		out := owner.next(t, "the unplaced output and exit")
		if out.ToolCallID != "" || out.Reset {
			t.Fatalf("event %+v before any row named the terminal", out)
		}
		data += out.Data
		if out.Exit != nil {
			break
		}
	}
	if data != "built\n" {
		t.Errorf("unplaced events carried %q", data)
	}

	owner.mu.Lock()
	owner.row = "call_1"
	owner.mu.Unlock()
	set.Placed(func(o terminal.Owner) bool { return o != owner }, resp.TerminalID)
	select {
	case out := <-owner.events:
		t.Fatalf("a terminal of another owner was placed: %+v", out)
	default:
	}
	set.Placed(func(o terminal.Owner) bool { return o == owner }, resp.TerminalID)
	out := owner.next(t, "the output sent again for the row")
	if out.ToolCallID != "call_1" || !out.Reset || out.Data != "built\n" || out.Exit == nil || out.Source != "client" {
		t.Errorf("placed event %+v, want the whole output and exit, Reset, for call_1", out)
	}

	termReq := &acpclient.TerminalRequest{SessionID: "s1", TerminalID: resp.TerminalID}
	if _, err := set.Output(&fakeOwner{}, termReq); err == nil {
		t.Error("another owner read the terminal")
	}
	if err := set.Release(owner, termReq); err != nil {
		t.Error(err)
	}
	if _, err := set.Output(owner, termReq); err == nil {
		t.Error("a released terminal still answers")
	}
}
