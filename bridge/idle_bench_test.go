package bridge

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// idleBridges is how many bridges BenchmarkIdleBridge starts per round.
const idleBridges = 50

// BenchmarkIdleBridge starts idleBridges bridges on one Host, opens a
// session on each and lets them go idle, then reports the heap
// ("heap-B/bridge", HeapAlloc growth after a GC) and goroutines
// ("goroutines/bridge") each holds. "process" runs the fake agent as a
// real process, so everything counted is the bridge's; "inproc" runs it in
// process through acptest.Transport, and subtracts the same number of those
// agents measured alone under a bare acpclient.Conn ("agent-B" is that
// share, Conn included, so "heap-B/bridge" is then the bridge beyond a Conn).
func BenchmarkIdleBridge(b *testing.B) {
	bin := acptest.BuildBinary(b)
	script := acptest.WriteScript(b, acptest.Script{})
	b.Run("process", func(b *testing.B) {
		idleBench(b, func() acpclient.Transport {
			return &acpclient.CommandTransport{Path: bin, Args: []string{"-script", script}}
		}, 0)
	})
	b.Run("inproc", func(b *testing.B) {
		newT := func() acpclient.Transport { return &acptest.Transport{} }
		idleBench(b, newT, bareConnHeap(b, newT))
	})
}

// idleBench measures idle bridges over transports from newT, less share
// bytes of heap each.
func idleBench(b *testing.B, newT func() acpclient.Transport, share float64) {
	var heap, goroutines float64
	for b.Loop() {
		h := NewHost(nil)
		go func() {
			for range h.Events() {
			}
		}()
		before, g0 := heapNow()
		for i := range idleBridges {
			br, err := h.Start(context.Background(), Config{ID: fmt.Sprint("idle", i), Transport: newT()})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := br.OpenSession(context.Background(), SessionConfig{Cwd: "/w"}); err != nil {
				b.Fatal(err)
			}
		}
		after, g1 := heapNow()
		heap += (float64(after)-float64(before))/idleBridges - share
		goroutines += float64(g1-g0) / idleBridges
		if err := h.Shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(heap/float64(b.N), "heap-B/bridge")
	b.ReportMetric(goroutines/float64(b.N), "goroutines/bridge")
	if share > 0 {
		b.ReportMetric(share, "agent-B")
	}
}

// bareConnHeap is the heap one in-process fake agent holds with a bare
// acpclient.Conn and a session open, once idle.
func bareConnHeap(b *testing.B, newT func() acpclient.Transport) float64 {
	before, _ := heapNow()
	conns := make([]*acpclient.Conn, idleBridges)
	for i := range conns {
		c, err := acpclient.Connect(context.Background(), newT(), idleClient{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Initialize(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		if _, err := c.NewSession(context.Background(), &acpclient.NewSessionRequest{Cwd: "/w"}); err != nil {
			b.Fatal(err)
		}
		conns[i] = c
	}
	after, _ := heapNow()
	for _, c := range conns {
		c.Close()
		<-c.Done()
	}
	return (float64(after) - float64(before)) / idleBridges
}

// heapNow collects garbage and returns the heap allocated and the number of
// goroutines.
func heapNow() (uint64, int) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, runtime.NumGoroutine()
}

// idleClient is the Client of bareConnHeap's Conns: nothing arrives.
type idleClient struct{}

func (idleClient) SessionUpdate(context.Context, *acpclient.SessionNotification) {}
func (idleClient) RequestPermission(_ context.Context, _ *acpclient.RequestPermissionRequest, reply func(*acpclient.RequestPermissionResponse, error)) {
	reply(acpclient.PermissionCancelled(), nil)
}
