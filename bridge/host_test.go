package bridge

import (
	"context"
	"testing"

	"github.com/acphost/acphost/acptest"
)

// TestHostListsBridgesUntilRemoved: a closed bridge (like one whose agent
// died) is still found and listed, not running; only Remove forgets one.
func TestHostListsBridgesUntilRemoved(t *testing.T) {
	h, _ := newHostAndRecorder(t, nil)
	closed, err := h.Start(context.Background(), agentConfig(t, "closed", acptest.Script{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(context.Background(), agentConfig(t, "removed", acptest.Script{})); err != nil {
		t.Fatal(err)
	}
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Remove("removed"); err != nil {
		t.Fatal(err)
	}
	if b, ok := h.Bridge("closed"); !ok || b != closed || b.Running() {
		t.Errorf("Bridge(closed) = %v, %v: want it, not running", b, ok)
	}
	if _, ok := h.Bridge("removed"); ok {
		t.Error("a removed bridge is still found")
	}
	if all := h.Bridges(); len(all) != 1 || all[0] != closed {
		t.Errorf("Bridges() = %v, want only the closed bridge", all)
	}
}
