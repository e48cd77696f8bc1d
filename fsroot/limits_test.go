package fsroot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/acphost/acphost/internal/nonroot"
)

// TestWriteOverCapIsRefused checks that content over the write cap
// (MaxWriteSize, by default the read cap) is refused before anything is
// written: the old file stays byte-identical, no temporary is left and no
// parent directory is made.
func TestWriteOverCapIsRefused(t *testing.T) {
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd := tempDir(t)
		p := filepath.Join(cwd, "f.txt")
		writeFile(t, p, "old\r\n")
		for _, tc := range []struct {
			name string
			opts Options
			max  int
		}{
			{"default is the read cap", Options{MaxFileSize: 10}, 10},
			{"own cap", Options{MaxFileSize: 100, MaxWriteSize: 5}, 5},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := kind.open(t, cwd, &tc.opts)
				if got := r.(interface{ MaxWriteSize() int64 }).MaxWriteSize(); got != int64(tc.max) {
					t.Fatalf("MaxWriteSize = %d, want %d", got, tc.max)
				}
				over := strings.Repeat("x", tc.max+1)
				err := r.WriteTextFile(ctx, p, over)
				if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), p) ||
					!strings.Contains(err.Error(), "limit") {
					t.Fatalf("over-cap write: %v", err)
				}
				if got := readFile(t, p); got != "old\r\n" {
					t.Fatalf("refused write changed the file to %q", got)
				}
				fresh := filepath.Join(cwd, "new", "g.txt")
				if err := r.WriteTextFile(ctx, fresh, over); !errors.Is(err, ErrTooLarge) {
					t.Fatalf("over-cap new file: %v", err)
				}
				if _, err := os.Lstat(filepath.Dir(fresh)); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("refused write made its directory: %v", err)
				}
				noTempFiles(t, cwd)
				atCap := strings.Repeat("y", tc.max)
				if err := r.WriteTextFile(ctx, p, atCap); err != nil {
					t.Fatalf("write at the cap: %v", err)
				}
				if got := readFile(t, p); got != atCap {
					t.Fatalf("write at the cap gave %q", got)
				}
				writeFile(t, p, "old\r\n")
			})
		}
	})
}

// TestReadRefusesTextThatIsNotUTF8 checks that a file with an invalid
// UTF-8 sequence is refused with ErrNotText naming the path and the offset
// of the first bad byte, for whole reads, slices and overlay buffers, while
// a BOM, CRLF and NUL round-trip byte for byte.
func TestReadRefusesTextThatIsNotUTF8(t *testing.T) {
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd := tempDir(t)
		bad := filepath.Join(cwd, "latin1.txt")
		writeFile(t, bad, "line one\ncaf\xe9 au lait\n")
		overlaid := filepath.Join(cwd, "open.txt")
		writeFile(t, overlaid, "fine on disk\n")
		overlay := overlayMap{overlaid: "ok\n\xed\xa0\x80 lone surrogate\n"}
		r := kind.open(t, cwd, &Options{Overlay: overlay})
		for _, c := range []struct {
			path        string
			line, limit int
			offset      int
		}{
			{bad, 0, 0, 12},
			{bad, 1, 1, 12}, // the slice itself is valid, the file is not
			{overlaid, 0, 0, 3},
		} {
			got, err := r.ReadTextFile(ctx, c.path, c.line, c.limit)
			var notText *NotTextError
			if !errors.Is(err, ErrNotText) || !errors.As(err, &notText) || notText.Offset != c.offset {
				t.Fatalf("read %s [%d,%d] = %q, %v; want ErrNotText at offset %d", c.path, c.line, c.limit, got, err, c.offset)
			}
			if msg := err.Error(); !strings.Contains(msg, c.path) || !strings.Contains(msg, "offset") {
				t.Errorf("error does not name the path and offset: %v", err)
			}
			if strings.Contains(got, "\ufffd") {
				t.Errorf("altered text handed out: %q", got)
			}
		}

		text := filepath.Join(cwd, "bom.txt")
		content := "\ufeffone\r\ntwo\x00\r\n\u00e9t\u00e9 \u2603\r\n"
		writeFile(t, text, content)
		got, err := r.ReadTextFile(ctx, text, 0, 0)
		if err != nil || got != content {
			t.Fatalf("read = %q, %v; want %q", got, err, content)
		}
		if err := r.WriteTextFile(ctx, text, got); err != nil {
			t.Fatal(err)
		}
		if disk := readFile(t, text); disk != content {
			t.Fatalf("round trip changed the bytes: %q", disk)
		}
	})
}

type overlayMap map[string]string

func (m overlayMap) Buffer(path string) (string, bool) {
	text, ok := m[path]
	return text, ok
}

// TestWriteRefusesFileTheUserMayNotWrite checks, as a user without root's
// bypass, that a 0444 file is not replaced by the temporary-and-rename
// path (which needs only the directory's permission): the refusal is
// errors.Is(err, fs.ErrPermission), the file byte-identical and no
// temporary left, while a writable file next to it is written.
func TestWriteRefusesFileTheUserMayNotWrite(t *testing.T) {
	if !nonroot.Run(t) {
		return
	}
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd := tempDir(t)
		locked := filepath.Join(cwd, "locked.txt")
		writeFile(t, locked, "keep me\n")
		if err := os.Chmod(locked, 0o444); err != nil {
			t.Fatal(err)
		}
		open := filepath.Join(cwd, "open.txt")
		writeFile(t, open, "old\n")
		r := kind.open(t, cwd, nil)
		err := r.WriteTextFile(ctx, locked, "replaced\n")
		if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), locked) ||
			!strings.Contains(err.Error(), "not writable") {
			t.Fatalf("write to a 0444 file: %v", err)
		}
		if got := readFile(t, locked); got != "keep me\n" {
			t.Fatalf("0444 file replaced: %q", got)
		}
		info, err := os.Stat(locked)
		if err != nil || info.Mode().Perm() != 0o444 {
			t.Fatalf("0444 file now %v, %v", info.Mode(), err)
		}
		noTempFiles(t, cwd)
		if err := r.WriteTextFile(ctx, open, "new\n"); err != nil {
			t.Fatalf("writable file: %v", err)
		}
		if got := readFile(t, open); got != "new\n" {
			t.Fatalf("writable file = %q", got)
		}
	})
}

// TestSFTPWriteDoesNotCopyContent checks that an SFTP write sends the
// content through a bounded buffer instead of converting the whole string
// to a second copy. The figure counts the in-process server too, which
// allocates its own packets for everything it receives (about 2.6× in all,
// 3.5× with the copy).
func TestSFTPWriteDoesNotCopyContent(t *testing.T) {
	cwd := tempDir(t)
	r := openSFTP(t, cwd, &Options{MaxFileSize: 64 << 20})
	content := strings.Repeat("0123456789abcde\n", 1<<20)
	p := filepath.Join(cwd, "f")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := r.WriteTextFile(ctx, p, content); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	ratio := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(content))
	t.Logf("a %d-byte SFTP write allocated %.2f× its size", len(content), ratio)
	if ratio > 3.1 {
		t.Errorf("a %d-byte SFTP write allocated %.2f× its size, want under 3.1×", len(content), ratio)
	}
	if readFile(t, p) != content {
		t.Fatal("content differs on disk")
	}
}
