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
// what keeps its peak under twice the file, and that the file, read in
// several pieces with runes cut at their edges, arrives intact.
func TestSFTPReadCollectsAsItGoes(t *testing.T) {
	cwd := tempDir(t)
	content := benchText(benchProse, 5*sftpReadPiece/2)
	p := filepath.Join(cwd, "big.txt")
	writeFile(t, p, content)
	r, _ := newSFTPRoot(t, cwd, &Options{MaxFileSize: int64(len(content))})
	const every = 1 << 20
	r.collectEvery = every
	before := forcedCollections()
	got, err := r.ReadTextFile(ctx, p, 0, 0)
	if err != nil || got != content {
		t.Fatalf("read %d bytes (want %d), %v", len(got), len(content), err)
	}
	// Each whole piece read is a collection, as a piece is more than
	// every; the last piece is short.
	if n, want := forcedCollections()-before, uint64(len(content)/sftpReadPiece); n < want {
		t.Errorf("a %d-byte read ran %d collections, want at least %d (one per %d-byte piece)", len(content), n, want, sftpReadPiece)
	}
}

// TestSFTPReadRefusesBadTextAcrossPieces checks that the UTF-8 check of a
// read in pieces finds a bad byte where it is, whichever piece holds it.
func TestSFTPReadRefusesBadTextAcrossPieces(t *testing.T) {
	cwd := tempDir(t)
	good := benchText(benchProse, sftpReadPiece+64)
	r, _ := newSFTPRoot(t, cwd, &Options{MaxFileSize: int64(len(good))})
	for _, at := range []int{10, sftpReadPiece - 1, sftpReadPiece, sftpReadPiece + 5} {
		bad := []byte(good)
		bad[at] = 0xff
		p := filepath.Join(cwd, "bad.txt")
		writeFile(t, p, string(bad))
		_, err := r.ReadTextFile(ctx, p, 0, 0)
		want := firstBadRune(string(bad))
		if off := notTextOffset(err); off != want {
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
