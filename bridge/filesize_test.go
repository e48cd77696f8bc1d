package bridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/acphost/acphost/fsroot"
	"github.com/acphost/acphost/internal/waitfor"
)

// wireAgent is an agent played by the test on an in-memory connection, so
// the test decides every byte the host reads and allocates nothing large
// itself while the host reads them.
type wireAgent struct {
	t         *testing.T
	hostEnd   io.ReadWriteCloser
	toHost    *io.PipeWriter
	responses chan json.RawMessage
	wg        sync.WaitGroup
}

type wireEnd struct {
	io.Reader
	io.WriteCloser
	closeRead func() error
}

func (e wireEnd) Close() error {
	e.WriteCloser.Close()
	return e.closeRead()
}

func newWireAgent(t *testing.T) *wireAgent {
	hostReads, toHost := io.Pipe()
	fromHost, hostWrites := io.Pipe()
	a := &wireAgent{
		t:         t,
		hostEnd:   wireEnd{Reader: hostReads, WriteCloser: hostWrites, closeRead: hostReads.Close},
		toHost:    toHost,
		responses: make(chan json.RawMessage, 16),
	}
	a.wg.Add(1)
	go a.serve(fromHost)
	t.Cleanup(func() {
		toHost.Close()
		fromHost.Close()
		a.wg.Wait()
	})
	return a
}

func (a *wireAgent) Connect(context.Context) (io.ReadWriteCloser, error) { return a.hostEnd, nil }

// serve answers initialize and session/new and hands every response the
// host sends to a.responses.
func (a *wireAgent) serve(fromHost io.Reader) {
	defer a.wg.Done()
	sc := bufio.NewScanner(fromHost)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		var result string
		switch {
		case m.Method == "" && m.ID != nil:
			a.responses <- append(json.RawMessage(nil), sc.Bytes()...)
			continue
		case m.ID == nil:
			continue
		case m.Method == "initialize":
			result = `{"protocolVersion":1,"agentCapabilities":{},"authMethods":[]}`
		case m.Method == "session/new":
			result = `{"sessionId":"s1"}`
		default:
			a.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"no"}}`)
			continue
		}
		a.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`)
	}
}

func (a *wireAgent) send(line string) {
	_, _ = io.WriteString(a.toHost, line+"\n")
}

// writeLine builds an fs/write_text_file request line whose content is n
// bytes of source-like text (with newlines, so the JSON has escapes).
func writeLine(id, path string, n int) []byte {
	var b bytes.Buffer
	b.Grow(n*6/5 + 256)
	b.WriteString(`{"jsonrpc":"2.0","id":"` + id + `","method":"fs/write_text_file","params":{"sessionId":"s1","path":`)
	p, _ := json.Marshal(path)
	b.Write(p)
	b.WriteString(`,"content":"`)
	const unit = "\tx := \"tab\"\n" // 13 bytes of content, 16 once escaped
	for written := 0; written < n; written += len(unit) {
		b.WriteString(`\tx := \"tab\"\n`)
	}
	b.WriteString(`"}}` + "\n")
	return b.Bytes()
}

// allocatedWhile reports the bytes the process allocated while f ran.
func allocatedWhile(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestWriteTextFileMemory sends one fs/write_text_file line of a few MiB through
// a Conn to a bridge serving an fsroot.Local root, and measures the bytes
// the host allocates for it: an accepted write at the root's cap costs a
// small multiple of its size (the line assembled from chunks, about 2×, and
// the decoded content, 1× or less), and a write over the cap is refused
// without decoding its content (about 2×). Both are measured with
// TotalAlloc, which is deterministic enough: before the fix they were 8.5×.
func TestWriteTextFileMemory(t *testing.T) {
	const limit = 1 << 20
	dir := t.TempDir()
	target := filepath.Join(dir, "f.go")
	os.WriteFile(target, []byte("old\n"), 0o644)
	root, err := fsroot.NewLocal(dir, &fsroot.Options{MaxFileSize: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	agent := newWireAgent(t)
	h, _ := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), Config{ID: "mem", Transport: agent})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: dir, Files: root}); err != nil {
		t.Fatal(err)
	}
	send := func(line []byte) (json.RawMessage, uint64) {
		var resp json.RawMessage
		n := allocatedWhile(func() {
			if _, err := agent.toHost.Write(line); err != nil {
				t.Fatal(err)
			}
			resp = <-agent.responses
		})
		return resp, n
	}

	atCap := writeLine("cap", target, limit-16)
	resp, accepted := send(atCap)
	if strings.Contains(string(resp), `"error"`) {
		t.Fatalf("write at the cap answered %s", resp)
	}
	if info, err := os.Stat(target); err != nil || info.Size() < limit-16 || info.Size() > limit {
		t.Fatalf("write at the cap left %v, %v", info, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want only the target", len(entries))
	}
	n := float64(len(atCap))
	t.Logf("accepted %d-byte line: %d bytes allocated (%.2f×)", len(atCap), accepted, float64(accepted)/n)
	if float64(accepted) > 3.25*n {
		t.Errorf("accepted %d-byte line allocated %d bytes (%.2f×), want under 3.25×", len(atCap), accepted, float64(accepted)/n)
	}

	written, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	huge := writeLine("huge", target, 4*limit)
	resp, refused := send(huge)
	if !strings.Contains(string(resp), `"code":-32602`) || !strings.Contains(string(resp), "over the limit") {
		t.Fatalf("over-cap write answered %.200s", resp)
	}
	if got, _ := os.ReadFile(target); !bytes.Equal(got, written) {
		t.Fatalf("refused write changed the file to %d bytes", len(got))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("refused write left %d entries, want only the target", len(entries))
	}
	n = float64(len(huge))
	t.Logf("refused %d-byte line: %d bytes allocated (%.2f×)", len(huge), refused, float64(refused)/n)
	if float64(refused) > 2.25*n {
		t.Errorf("refused %d-byte line allocated %d bytes (%.2f×), want under 2.25×", len(huge), refused, float64(refused)/n)
	}
}
