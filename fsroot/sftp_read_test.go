package fsroot

import (
	"path/filepath"
	"runtime/metrics"
	"testing"
	"unicode/utf8"
)

// forcedCollections is how many garbage collections runtime.GC has run
// in this process.
func forcedCollections() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestSFTPReadCollectsAsItGoes checks that a large SFTP read has the
// garbage of its packets collected every collectEvery bytes, which is
// what keeps its peak under twice the file, and that the file, in packets
// that cut runes at their edges, arrives intact.
func TestSFTPReadCollectsAsItGoes(t *testing.T) {
	cwd := tempDir(t)
	const every = 1 << 20
	content := benchText(benchProse, 5*every+every/2)
	p := filepath.Join(cwd, "big.txt")
	writeFile(t, p, content)
	r, _ := newSFTPRoot(t, cwd, &Options{MaxFileSize: int64(len(content))})
	r.collectEvery = every
	before := forcedCollections()
	got, err := r.ReadTextFile(ctx, p, 0, 0)
	if err != nil || got != content {
		t.Fatalf("read %d bytes (want %d), %v", len(got), len(content), err)
	}
	if n, want := forcedCollections()-before, uint64(len(content)/every); n < want {
		t.Errorf("a %d-byte read ran %d collections, want at least %d (one per %d bytes)", len(content), n, want, every)
	}
}

// TestSFTPReadRefusesBadTextAcrossPackets checks that the UTF-8 check of a
// read that arrives packet by packet finds a bad byte where it is,
// whichever packet holds it.
func TestSFTPReadRefusesBadTextAcrossPackets(t *testing.T) {
	cwd := tempDir(t)
	good := benchText(benchProse, 3*sftpPacket+64)
	r, _ := newSFTPRoot(t, cwd, &Options{MaxFileSize: int64(len(good))})
	p := filepath.Join(cwd, "bad.txt")
	for _, at := range []int{10, sftpPacket - 1, sftpPacket, 2*sftpPacket + 5, len(good) - 1} {
		bad := []byte(good)
		bad[at] = 0xff
		writeFile(t, p, string(bad))
		_, err := r.ReadTextFile(ctx, p, 0, 0)
		if off, want := notTextOffset(err), firstBadRune(string(bad)); off != want {
			t.Errorf("0xff at %d: %v, want a NotTextError at %d", at, err, want)
		}
	}
}

// firstBadRune is where a rune-by-rune decode of s first fails, or -1.
func firstBadRune(s string) int {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}
