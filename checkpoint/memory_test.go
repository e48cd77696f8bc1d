package checkpoint

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// peakRSS is this process's peak resident set size (VmHWM), in bytes.
func peakRSS(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Skip("no VmHWM in /proc/self/status")
	return 0
}

// writeRandom writes size pseudo-random bytes to path, a buffer at a time.
func writeRandom(t *testing.T, path string, size int64, rng *rand.ChaCha8, buf []byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for size > 0 {
		n := min(int64(len(buf)), size)
		_, _ = rng.Read(buf[:n])
		if _, err := f.Write(buf[:n]); err != nil {
			t.Fatal(err)
		}
		size -= n
	}
}

// TestMemoryBound: recording, listing and diffing a 1 GiB workspace (two
// files over the size cap, sixteen just under it, 24,000 small ones)
// keeps this process's memory small: git reads the files, we read paths.
// The peak RSS of our process (git's are not ours) is logged and bounded
// well under the size of any big file.
func TestMemoryBound(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("writes 1 GiB; the race detector's memory would be measured too")
	}
	ws := tempDir(t)
	rng := rand.NewChaCha8([32]byte{1})
	buf := make([]byte, 1<<20)
	var total int64
	for i := range 2 {
		writeRandom(t, filepath.Join(ws, fmt.Sprintf("big-%d.bin", i)), 320<<20, rng, buf)
		total += 320 << 20
	}
	mkdir(t, filepath.Join(ws, "mid"))
	for i := range 16 {
		writeRandom(t, filepath.Join(ws, fmt.Sprintf("mid/%02d.bin", i)), 6<<20, rng, buf)
		total += 6 << 20
	}
	small := bytes.Repeat([]byte("a line of a small text file\n"), 12<<10/28)
	for i := range 24000 {
		dir := fmt.Sprintf("src/d%03d", i/200)
		if i%200 == 0 {
			mkdir(t, filepath.Join(ws, dir))
		}
		content := append([]byte(strconv.Itoa(i)+"\n"), small...)
		if err := os.WriteFile(filepath.Join(ws, dir, fmt.Sprintf("f%05d.txt", i)), content, 0o644); err != nil {
			t.Fatal(err)
		}
		total += int64(len(content))
	}
	buf, small = nil, nil
	runtime.GC()
	debug.FreeOSMemory()
	// Writing 5 to clear_refs resets the peak to the current size.
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak RSS: %v", err)
	}
	start := peakRSS(t)

	s := open(t, ws, Options{})
	before := snap(t, s, "before")
	write(t, filepath.Join(ws, "src/d000/f00000.txt"), "changed\n", 0o644)
	write(t, filepath.Join(ws, "src/d050/new.txt"), "new\n", 0o644)
	writeRandom(t, filepath.Join(ws, "mid/00.bin"), 6<<20, rng, make([]byte, 64<<10))
	end := snap(t, s, "end")
	changes, err := s.Changes(testCtx(t), before.ID, end.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 3 || len(before.Skipped) != 2 {
		t.Fatalf("changes %+v, skipped %+v", changes, before.Skipped)
	}
	if _, err := s.Diff(testCtx(t), before.ID, end.ID, "src/d000/f00000.txt"); err != nil {
		t.Fatal(err)
	}
	peak := peakRSS(t)
	t.Logf("workspace %d MiB; peak RSS of this process %d MiB (%d MiB before recording)", total>>20, peak>>20, start>>20)
	if limit := int64(96 << 20); peak > limit {
		t.Errorf("peak RSS %d MiB over %d MiB while recording a %d MiB workspace", peak>>20, limit>>20, total>>20)
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}
