package journal_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/floodagent"
	"github.com/acphost/acphost/journal"
)

// hostChildEnv names the journal file a re-executed test binary floods as
// the host process TestHostKilledMidFlood kills.
const hostChildEnv = "ACPHOST_JOURNAL_HOST_CHILD"

// TestHostKilledMidFlood SIGKILLs a real host process while an agent floods
// it, reopens its journal and checks what the issue promises: the database
// is intact, and every event up to the last one the host delivered (which
// it does only after its batch committed) is there, in order, with no gap
// in Pos nor in any session's Seq.
func TestHostKilledMidFlood(t *testing.T) {
	if os.Getenv(hostChildEnv) != "" {
		t.Skip("the child runs in TestHostChild")
	}
	path := filepath.Join(t.TempDir(), "journal.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostChild$", "-test.v=false")
	cmd.Env = append(os.Environ(), hostChildEnv+"="+path)
	cmd.Stderr = os.Stderr
	if _, err := cmd.StdinPipe(); err != nil { // held open: the child lives until killed
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The child prints the Pos of delivered events; kill it well into the
	// flood, on a line boundary of its output.
	var delivered uint64
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		pos, err := strconv.ParseUint(lines.Text(), 10, 64)
		if err != nil {
			continue // the test framework's own lines
		}
		delivered = pos
		if delivered >= 20000 {
			break
		}
	}
	if delivered < 20000 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the host child stopped after %d events", delivered)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child did not die of SIGKILL: %v", err)
	}

	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var verdict string
	if err := raw.QueryRow("PRAGMA integrity_check").Scan(&verdict); err != nil || verdict != "ok" {
		t.Fatalf("integrity_check = %q, %v", verdict, err)
	}
	raw.Close()

	ctx := context.Background()
	db, err := journal.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	last, err := db.LastPos(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if last < delivered {
		t.Fatalf("the journal ends at Pos %d, before the %d events the host delivered", last, delivered)
	}
	var want uint64 = 1
	seqs := map[string]uint64{}
	for q := (bridge.EventQuery{Limit: 5000}); ; {
		events, err := db.ReadEvents(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) == 0 {
			break
		}
		for _, ev := range events {
			if ev.Pos != want {
				t.Fatalf("Pos %d follows %d", ev.Pos, want-1)
			}
			want++
			k := ev.Key
			if k == "" {
				k = "bridge:" + ev.Bridge
			}
			if ev.Seq != seqs[k]+1 {
				t.Fatalf("event %d: Seq %d of %q follows %d", ev.Pos, ev.Seq, k, seqs[k])
			}
			seqs[k] = ev.Seq
		}
		q.After = events[len(events)-1].Pos
	}
	if want-1 != last {
		t.Fatalf("read %d events, LastPos says %d", want-1, last)
	}
}

// TestHostChild is the host TestHostKilledMidFlood kills: two agents flood
// one Host with a journal, and every delivered event's Pos goes to stdout.
func TestHostChild(t *testing.T) {
	path := os.Getenv(hostChildEnv)
	if path == "" {
		t.Skip("run by TestHostKilledMidFlood")
	}
	ctx := context.Background()
	db, err := journal.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := bridge.NewHost(&bridge.HostOptions{Journal: db})
	go func() {
		w := bufio.NewWriter(os.Stdout)
		for ev := range h.Events() {
			fmt.Fprintln(w, ev.Pos)
			if ev.Pos%256 == 0 {
				w.Flush()
			}
		}
	}()
	for i := range 2 {
		b, err := h.Start(ctx, bridge.Config{ID: fmt.Sprintf("flood%d", i),
			Transport: &floodagent.Transport{Chunks: 1 << 30, ToolEvery: 50}})
		if err != nil {
			t.Fatal(err)
		}
		s, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		go s.Prompt(ctx, acpclient.TextBlock("flood"))
	}
	// Until the parent kills it; should the parent die first, its end of
	// stdin closes and the child ends too.
	io.Copy(io.Discard, os.Stdin)
}
