package fsroot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/iotest"
)

var ctx = context.Background()

func TestConfinement(t *testing.T) {
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd, outside := tempDir(t), tempDir(t)
		writeFile(t, filepath.Join(cwd, "in.txt"), "inside")
		writeFile(t, filepath.Join(outside, "secret.txt"), "secret")
		symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(cwd, "file-link"))
		symlink(t, outside, filepath.Join(cwd, "dir-link"))
		symlink(t, "in.txt", filepath.Join(cwd, "inside-link"))
		symlink(t, filepath.Join(outside, "not-yet"), filepath.Join(cwd, "dangling-out"))
		r := kind.open(t, cwd, nil)

		cases := []struct {
			name string
			path string
			want error // nil: allowed
		}{
			{"relative", "in.txt", ErrNotAbsolute},
			{"outside", filepath.Join(outside, "secret.txt"), ErrOutsideRoot},
			{"dot-dot traversal", cwd + "/../" + filepath.Base(outside) + "/secret.txt", ErrOutsideRoot},
			{"file symlink out", filepath.Join(cwd, "file-link"), ErrOutsideRoot},
			{"dir symlink out", filepath.Join(cwd, "dir-link", "secret.txt"), ErrOutsideRoot},
			{"new file under symlinked dir", filepath.Join(cwd, "dir-link", "new.txt"), ErrOutsideRoot},
			{"new dirs under symlinked dir", filepath.Join(cwd, "dir-link", "a", "b.txt"), ErrOutsideRoot},
			{"dangling symlink out", filepath.Join(cwd, "dangling-out"), ErrOutsideRoot},
			{"dot-dot staying inside", cwd + "/sub/../in.txt", nil},
			{"symlink inside", filepath.Join(cwd, "inside-link"), nil},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, readErr := r.ReadTextFile(ctx, tc.path, 0, 0)
				writeErr := r.WriteTextFile(ctx, tc.path, "overwritten")
				for op, err := range map[string]error{"read": readErr, "write": writeErr} {
					if tc.want == nil {
						if err != nil {
							t.Errorf("%s: %v", op, err)
						}
						continue
					}
					if !errors.Is(err, tc.want) {
						t.Fatalf("%s error = %v, want %v", op, err, tc.want)
					}
					var pe *PathError
					if !errors.As(err, &pe) || pe.Op != op || pe.Path != tc.path {
						t.Errorf("%s error %#v does not name op %q and path %q", op, err, op, tc.path)
					}
				}
			})
		}
		if got := readFile(t, filepath.Join(outside, "secret.txt")); got != "secret" {
			t.Errorf("outside file changed to %q", got)
		}
		if _, err := os.Stat(filepath.Join(outside, "not-yet")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("write through dangling link created the outside file: %v", err)
		}
		if _, err := os.Stat(filepath.Join(outside, "a")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("parent directories created outside the root: %v", err)
		}
	})
}

func TestOutsideRefusalNamesResolvedTarget(t *testing.T) {
	cwd, outside := tempDir(t), tempDir(t)
	symlink(t, outside, filepath.Join(cwd, "out"))
	r := openLocal(t, cwd, nil)
	_, err := r.ReadTextFile(ctx, filepath.Join(cwd, "out", "x"), 0, 0)
	if err == nil || !strings.Contains(err.Error(), "resolves to "+filepath.Join(outside, "x")) {
		t.Fatalf("error %v does not say where the path leads", err)
	}
}

func TestMissingFileIsNotExist(t *testing.T) {
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd := tempDir(t)
		r := kind.open(t, cwd, nil)
		_, err := r.ReadTextFile(ctx, filepath.Join(cwd, "nope", "missing.txt"), 0, 0)
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("error = %v, want fs.ErrNotExist", err)
		}
	})
}

func TestRootDirsAreResolvedThroughSymlinks(t *testing.T) {
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		real, other := tempDir(t), tempDir(t)
		link := filepath.Join(other, "workspace")
		symlink(t, real, link)
		writeFile(t, filepath.Join(real, "a.txt"), "A")
		r := kind.open(t, link, nil)
		if r.Cwd() != real {
			t.Fatalf("Cwd = %q, want %q", r.Cwd(), real)
		}
		for _, p := range []string{filepath.Join(link, "a.txt"), filepath.Join(real, "a.txt")} {
			if got, err := r.ReadTextFile(ctx, p, 0, 0); err != nil || got != "A" {
				t.Errorf("read %s = %q, %v", p, got, err)
			}
		}
		// The link's own directory is not part of the root.
		writeFile(t, filepath.Join(other, "b.txt"), "B")
		if _, err := r.ReadTextFile(ctx, filepath.Join(other, "b.txt"), 0, 0); !errors.Is(err, ErrOutsideRoot) {
			t.Errorf("sibling of the cwd link: %v, want ErrOutsideRoot", err)
		}
	})
}

func TestGrants(t *testing.T) {
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd, ext, ext2 := tempDir(t), tempDir(t), tempDir(t)
		writeFile(t, filepath.Join(ext, "x.txt"), "X")
		writeFile(t, filepath.Join(ext2, "y.txt"), "Y")
		r := kind.open(t, cwd, &Options{Grants: []string{ext2}})
		x, y := filepath.Join(ext, "x.txt"), filepath.Join(ext2, "y.txt")
		allowed := func(p string) bool {
			_, err := r.ReadTextFile(ctx, p, 0, 0)
			if err != nil && !errors.Is(err, ErrOutsideRoot) {
				t.Fatalf("read %s: %v", p, err)
			}
			return err == nil
		}
		if allowed(x) || !allowed(y) {
			t.Fatal("initial grants not applied")
		}
		if err := r.AddGrant(ctx, ext); err != nil {
			t.Fatal(err)
		}
		if !allowed(x) {
			t.Fatal("added grant not in force")
		}
		if !r.RemoveGrant(ext) {
			t.Fatal("RemoveGrant reported no such grant")
		}
		if allowed(x) {
			t.Fatal("removed grant still in force")
		}
		if err := r.WriteTextFile(ctx, x, "changed"); !errors.Is(err, ErrOutsideRoot) {
			t.Fatalf("write after removal: %v", err)
		}
		if err := r.SetGrants(ctx, []string{ext, filepath.Join(ext, "missing")}); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("SetGrants with a missing dir: %v", err)
		}
		if !allowed(y) || allowed(x) {
			t.Fatal("failed SetGrants changed the grants")
		}
		if err := r.SetGrants(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if allowed(y) || len(r.Grants()) != 0 {
			t.Fatal("SetGrants(nil) left a grant")
		}
		if err := r.AddGrant(ctx, "relative/dir"); !errors.Is(err, ErrNotAbsolute) {
			t.Fatalf("relative grant: %v", err)
		}
	})
}

func TestGrantsConcurrentWithReads(t *testing.T) {
	cwd, ext := tempDir(t), tempDir(t)
	writeFile(t, filepath.Join(ext, "x.txt"), "X")
	r := openLocal(t, cwd, nil)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := r.ReadTextFile(ctx, filepath.Join(ext, "x.txt"), 0, 0)
				if err != nil && !errors.Is(err, ErrOutsideRoot) {
					t.Error(err)
					return
				}
			}
		})
	}
	for range 50 {
		if err := r.AddGrant(ctx, ext); err != nil {
			t.Fatal(err)
		}
		r.RemoveGrant(ext)
	}
	close(stop)
	wg.Wait()
	if _, err := r.ReadTextFile(ctx, filepath.Join(ext, "x.txt"), 0, 0); !errors.Is(err, ErrOutsideRoot) {
		t.Fatalf("after final removal: %v", err)
	}
}

func TestReadLineAndLimit(t *testing.T) {
	const bom = "\ufeff"
	content := bom + "one\r\ntwo\nthree\r\nfour"
	cases := []struct {
		line, limit int
		want        string
	}{
		{0, 0, content},
		{1, 0, content},
		{1, 1, bom + "one\r\n"},
		{2, 1, "two\n"},
		{2, 2, "two\nthree\r\n"},
		{3, 0, "three\r\nfour"},
		{4, 5, "four"},
		{5, 0, ""},
		{0, 2, bom + "one\r\ntwo\n"},
	}
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd := tempDir(t)
		p := filepath.Join(cwd, "f.txt")
		writeFile(t, p, content)
		r := kind.open(t, cwd, nil)
		for _, tc := range cases {
			got, err := r.ReadTextFile(ctx, p, tc.line, tc.limit)
			if err != nil || got != tc.want {
				t.Errorf("line %d limit %d = %q, %v; want %q", tc.line, tc.limit, got, err, tc.want)
			}
		}
		if _, err := r.ReadTextFile(ctx, p, -1, 0); !errors.Is(err, ErrInvalidRange) {
			t.Errorf("negative line: %v", err)
		}
	})
}

func TestReadSizeCap(t *testing.T) {
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd := tempDir(t)
		writeFile(t, filepath.Join(cwd, "ok.txt"), "0123456789")
		writeFile(t, filepath.Join(cwd, "big.txt"), "0123456789A")
		r := kind.open(t, cwd, &Options{MaxFileSize: 10})
		if got, err := r.ReadTextFile(ctx, filepath.Join(cwd, "ok.txt"), 0, 0); err != nil || got != "0123456789" {
			t.Fatalf("at the cap: %q, %v", got, err)
		}
		_, err := r.ReadTextFile(ctx, filepath.Join(cwd, "big.txt"), 0, 0)
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "11 bytes, limit 10") {
			t.Fatalf("over the cap: %v", err)
		}
	})
}

func TestDefaultSizeCap(t *testing.T) {
	cwd := tempDir(t)
	p := filepath.Join(cwd, "huge.txt")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(DefaultMaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := openLocal(t, cwd, nil)
	if _, err := r.ReadTextFile(ctx, p, 0, 0); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("16 MiB + 1: %v", err)
	}
}

// TestReadAllCappedKeepsTheCap feeds readAllCapped files that changed size
// after they were measured: growth is read up to the cap and refused past
// it, whatever the size the buffer was made for and whatever the size of
// its pieces.
func TestReadAllCappedKeepsTheCap(t *testing.T) {
	for _, tc := range []struct {
		name      string
		r         func() io.Reader
		size, max int64
		want      string
		wantErr   error
	}{
		{"as measured", reader("abcdef"), 6, 6, "abcdef", nil},
		{"grew under the cap", reader("abcdef"), 3, 10, "abcdef", nil},
		{"grew past the cap", reader("abcdef"), 3, 4, "", ErrTooLarge},
		{"grew past the cap a byte at a time", func() io.Reader { return iotest.OneByteReader(strings.NewReader("abcdef")) }, 4, 4, "", ErrTooLarge},
		{"shrank", reader("abc"), 6, 6, "abc", nil},
		{"measured empty", reader("abc"), 0, 6, "abc", nil},
		{"data with EOF", func() io.Reader { return iotest.DataErrReader(strings.NewReader("abc")) }, 3, 3, "abc", nil},
		{"read error", func() io.Reader { return iotest.ErrReader(syscall.EIO) }, 3, 3, "", syscall.EIO},
	} {
		for _, piece := range []int{1, 2, 1 << 10} {
			t.Run(fmt.Sprintf("%s/piece %d", tc.name, piece), func(t *testing.T) {
				got, err := readAllCapped(tc.r(), tc.size, tc.max, piece)
				if tc.wantErr != nil {
					if !errors.Is(err, tc.wantErr) {
						t.Fatalf("err = %v, want %v", err, tc.wantErr)
					}
					return
				}
				if err != nil || got != tc.want {
					t.Fatalf("got %q, %v; want %q", got, err, tc.want)
				}
			})
		}
	}
}

// TestReadAllCappedReadsGrowthInPieces checks that a file that has grown
// past the size it was measured at is read on in whole pieces, not in
// reads of its measured size (a file measured empty, a byte at a time).
func TestReadAllCappedReadsGrowthInPieces(t *testing.T) {
	content := strings.Repeat("x", 4<<10)
	r := &countingReader{r: strings.NewReader(content)}
	got, err := readAllCapped(r, 0, 1<<20, 1<<10)
	if err != nil || got != content {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	// One byte (the measure, plus one), then four whole pieces and the end.
	if r.reads > 7 {
		t.Errorf("%d reads for %d bytes in pieces of %d", r.reads, len(content), 1<<10)
	}
}

type countingReader struct {
	r     io.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

func reader(s string) func() io.Reader {
	return func() io.Reader { return strings.NewReader(s) }
}

// TestReadCopiesTheFileOnce checks that a read holds the file in memory
// once: the text returned is the buffer the file was read into, not a copy
// of it. The SFTP figure counts the in-process server and both sides'
// packets, 1.25× the data each, and WriteTo's buffers (about 5.0× in all,
// 6.0× with a copy).
func TestReadCopiesTheFileOnce(t *testing.T) {
	limits := map[string]float64{"local": 1.1, "sftp": 5.5}
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd := tempDir(t)
		content := strings.Repeat("0123456789abcde\n", 1<<20)
		p := filepath.Join(cwd, "f")
		writeFile(t, p, content)
		r := kind.open(t, cwd, &Options{MaxFileSize: 64 << 20})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		got, err := r.ReadTextFile(ctx, p, 0, 0)
		runtime.ReadMemStats(&after)
		if err != nil || got != content {
			t.Fatalf("read %d bytes, %v", len(got), err)
		}
		ratio := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(content))
		t.Logf("a %d-byte read allocated %.2f× its size", len(content), ratio)
		if ratio > limits[kind.name] {
			t.Errorf("a %d-byte read allocated %.2f× its size, want under %.1f×", len(content), ratio, limits[kind.name])
		}
	})
}

func TestNonRegularFilesRefused(t *testing.T) {
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd := tempDir(t)
		if err := os.Mkdir(filepath.Join(cwd, "dir"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(cwd, "fifo"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := kind.open(t, cwd, nil)
		for _, name := range []string{"dir", "fifo"} {
			if _, err := r.ReadTextFile(ctx, filepath.Join(cwd, name), 0, 0); !errors.Is(err, ErrNotRegular) {
				t.Errorf("read %s: %v, want ErrNotRegular", name, err)
			}
		}
		if err := r.WriteTextFile(ctx, filepath.Join(cwd, "dir"), "x"); !errors.Is(err, ErrNotRegular) {
			t.Errorf("write over a directory: %v", err)
		}
		if err := r.WriteTextFile(ctx, cwd, "x"); !errors.Is(err, ErrNotRegular) {
			t.Errorf("write over the root: %v", err)
		}
	})
}

func TestWriteRoundTripAndModes(t *testing.T) {
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd := tempDir(t)
		existing := filepath.Join(cwd, "secret.env")
		writeFile(t, existing, "old")
		if err := os.Chmod(existing, 0o600); err != nil {
			t.Fatal(err)
		}
		r := kind.open(t, cwd, nil)
		content := "\ufeffline1\r\nline2\n"
		if err := r.WriteTextFile(ctx, existing, content); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, existing); got != content {
			t.Fatalf("content = %q", got)
		}
		if got, err := r.ReadTextFile(ctx, existing, 0, 0); err != nil || got != content {
			t.Fatalf("read back %q, %v", got, err)
		}
		assertMode(t, existing, 0o600)

		created := filepath.Join(cwd, "new.txt")
		if err := r.WriteTextFile(ctx, created, ""); err != nil {
			t.Fatal(err)
		}
		assertMode(t, created, DefaultFileMode)
		noTempFiles(t, cwd)
	})
}

func TestWriteFileModeOption(t *testing.T) {
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd := tempDir(t)
		r := kind.open(t, cwd, &Options{FileMode: 0o640})
		p := filepath.Join(cwd, "n.txt")
		if err := r.WriteTextFile(ctx, p, "x"); err != nil {
			t.Fatal(err)
		}
		assertMode(t, p, 0o640)
	})
}

func assertMode(t *testing.T, p string, want fs.FileMode) {
	t.Helper()
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != want {
		t.Errorf("%s mode = %v, want %v", p, info.Mode().Perm(), want)
	}
}

func TestWriteThroughInsideSymlinkKeepsLink(t *testing.T) {
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd := tempDir(t)
		writeFile(t, filepath.Join(cwd, "real.txt"), "old")
		symlink(t, "real.txt", filepath.Join(cwd, "link.txt"))
		r := kind.open(t, cwd, nil)
		if err := r.WriteTextFile(ctx, filepath.Join(cwd, "link.txt"), "new"); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, filepath.Join(cwd, "real.txt")); got != "new" {
			t.Fatalf("target = %q", got)
		}
		if info, err := os.Lstat(filepath.Join(cwd, "link.txt")); err != nil || info.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("link replaced by a file: %v", err)
		}
	})
}

// failingWriter accepts `after` bytes, then fails like a full disk.
type failingWriter struct {
	w     io.Writer
	after int
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.after {
		n, _ := f.w.Write(p[:f.after])
		f.after = 0
		return n, syscall.ENOSPC
	}
	f.after -= len(p)
	return f.w.Write(p)
}

func TestInterruptedWriteKeepsOldContent(t *testing.T) {
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd := tempDir(t)
		p := filepath.Join(cwd, "keep.txt")
		writeFile(t, p, "original")
		r := kind.open(t, cwd, nil)
		coreOf(r).wrapWriter = func(w io.Writer) io.Writer { return &failingWriter{w: w, after: 5} }
		err := r.WriteTextFile(ctx, p, strings.Repeat("new content ", 100))
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("error = %v, want the injected ENOSPC", err)
		}
		if got := readFile(t, p); got != "original" {
			t.Fatalf("old content lost: %q", got)
		}
		noTempFiles(t, cwd)
	})
}

func coreOf(r Root) *core {
	switch r := r.(type) {
	case *Local:
		return r.core
	case *SFTP:
		return r.core
	}
	panic(fmt.Sprintf("unknown root %T", r))
}

func TestWriteCreatesParentsInsideRoot(t *testing.T) {
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd := tempDir(t)
		r := kind.open(t, cwd, &Options{DirMode: 0o750})
		p := filepath.Join(cwd, "a", "b", "c.txt")
		if err := r.WriteTextFile(ctx, p, "deep"); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, p); got != "deep" {
			t.Fatalf("content = %q", got)
		}
		info, err := os.Stat(filepath.Join(cwd, "a"))
		if err != nil || !info.IsDir() {
			t.Fatalf("parent not created: %v", err)
		}
		// A file in the way of a parent is an error, not a replacement.
		writeFile(t, filepath.Join(cwd, "f"), "file")
		if err := r.WriteTextFile(ctx, filepath.Join(cwd, "f", "x.txt"), "x"); err == nil {
			t.Fatal("wrote below a regular file")
		}
	})
}

func TestReadOnlyGate(t *testing.T) {
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd := tempDir(t)
		p := filepath.Join(cwd, "f.txt")
		writeFile(t, p, "old")
		r := kind.open(t, cwd, &Options{ReadOnly: true, ReadOnlyReason: "Plan mode"})
		if err := r.WriteTextFile(ctx, p, "new"); !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "(Plan mode)") {
			t.Fatalf("initial read-only: %v", err)
		}
		r.SetReadOnly(false, "")
		if err := r.WriteTextFile(ctx, p, "new"); err != nil {
			t.Fatal(err)
		}
		r.SetReadOnly(true, "Ask mode")
		err := r.WriteTextFile(ctx, p, "newer")
		if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "write refused: session is read-only (Ask mode)") {
			t.Fatalf("error = %v", err)
		}
		if got := readFile(t, p); got != "new" {
			t.Fatalf("refused write changed the file to %q", got)
		}
		if got, err := r.ReadTextFile(ctx, p, 0, 0); err != nil || got != "new" {
			t.Fatalf("reads must still work: %q, %v", got, err)
		}
	})
}

type mapOverlay map[string]string

func (m mapOverlay) Buffer(p string) (string, bool) {
	s, ok := m[p]
	return s, ok
}

func TestOverlay(t *testing.T) {
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd, outside := tempDir(t), tempDir(t)
		p := filepath.Join(cwd, "open.go")
		writeFile(t, p, "saved\n")
		writeFile(t, filepath.Join(cwd, "real.go"), "saved real\n")
		symlink(t, "real.go", filepath.Join(cwd, "alias.go"))
		overlay := mapOverlay{
			p:                                 "unsaved 1\nunsaved 2\n",
			filepath.Join(cwd, "unsaved.go"):  "never saved\n",
			filepath.Join(cwd, "real.go"):     "real buffer\n",
			filepath.Join(outside, "evil.go"): "outside buffer\n",
		}
		var mu sync.Mutex
		var written []string
		r := kind.open(t, cwd, &Options{Overlay: overlay, OnWrite: func(p string) {
			mu.Lock()
			written = append(written, p)
			mu.Unlock()
		}})
		for path, want := range map[string]string{
			p:                                "unsaved 1\nunsaved 2\n",
			filepath.Join(cwd, "unsaved.go"): "never saved\n",
			filepath.Join(cwd, "alias.go"):   "real buffer\n",
		} {
			if got, err := r.ReadTextFile(ctx, path, 0, 0); err != nil || got != want {
				t.Errorf("read %s = %q, %v; want %q", path, got, err, want)
			}
		}
		if got, _ := r.ReadTextFile(ctx, p, 2, 1); got != "unsaved 2\n" {
			t.Errorf("sliced overlay = %q", got)
		}
		if _, err := r.ReadTextFile(ctx, filepath.Join(outside, "evil.go"), 0, 0); !errors.Is(err, ErrOutsideRoot) {
			t.Errorf("overlay outside the root: %v", err)
		}
		if err := r.WriteTextFile(ctx, cwd+"/./open.go", "written\n"); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, p); got != "written\n" {
			t.Errorf("disk = %q", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(written) != 1 || written[0] != p {
			t.Errorf("OnWrite calls = %q, want [%s]", written, p)
		}
	})
}

func TestOverlaySizeCap(t *testing.T) {
	cwd := tempDir(t)
	p := filepath.Join(cwd, "b.txt")
	r := openLocal(t, cwd, &Options{MaxFileSize: 3, Overlay: mapOverlay{p: "four"}})
	if _, err := r.ReadTextFile(ctx, p, 0, 0); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("big overlay: %v", err)
	}
}

func TestClosedRootRefuses(t *testing.T) {
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd := tempDir(t)
		r := kind.open(t, cwd, nil)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := r.ReadTextFile(ctx, filepath.Join(cwd, "x"), 0, 0); !errors.Is(err, ErrClosed) {
			t.Errorf("read after close: %v", err)
		}
		if _, err := r.Watch(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("watch after close: %v", err)
		}
	})
}

func TestNewRootValidatesCwd(t *testing.T) {
	cwd := tempDir(t)
	writeFile(t, filepath.Join(cwd, "file"), "x")
	for _, bad := range []string{"rel", filepath.Join(cwd, "missing"), filepath.Join(cwd, "file")} {
		if _, err := NewLocal(bad, nil); err == nil {
			t.Errorf("NewLocal(%q) succeeded", bad)
		}
	}
}

func TestSymlinkLoopIsAnError(t *testing.T) {
	cwd := tempDir(t)
	symlink(t, "b", filepath.Join(cwd, "a"))
	symlink(t, "a", filepath.Join(cwd, "b"))
	r := openLocal(t, cwd, nil)
	if _, err := r.ReadTextFile(ctx, filepath.Join(cwd, "a"), 0, 0); !errors.Is(err, errSymlinkLoop) {
		t.Fatalf("loop: %v", err)
	}
}

// TestRootOnSlashWritesAnywhere checks the root that confines nothing,
// which hosts use for their own files: it creates missing directories with
// DirMode, keeps an existing file's mode, writes through a symlinked
// directory without replacing the link, and leaves no temporary.
func TestRootOnSlashWritesAnywhere(t *testing.T) {
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		dir := tempDir(t)
		real := filepath.Join(dir, "real")
		writeFile(t, filepath.Join(real, "kept.json"), "{}")
		if err := os.Chmod(filepath.Join(real, "kept.json"), 0o600); err != nil {
			t.Fatal(err)
		}
		symlink(t, real, filepath.Join(dir, "link"))
		r := kind.open(t, "/", &Options{DirMode: 0o700})

		if err := r.WriteTextFile(ctx, filepath.Join(dir, "link", "kept.json"), `{"v":2}`); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, filepath.Join(real, "kept.json")); got != `{"v":2}` {
			t.Fatalf("through the link: %q", got)
		}
		assertMode(t, filepath.Join(real, "kept.json"), 0o600)
		if info, err := os.Lstat(filepath.Join(dir, "link")); err != nil || info.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("the symlinked directory was replaced: %v, %v", info, err)
		}

		created := filepath.Join(dir, "new", "deeper", "state.json")
		if err := r.WriteTextFile(ctx, created, "s"); err != nil {
			t.Fatal(err)
		}
		assertMode(t, filepath.Join(dir, "new"), 0o700)
		assertMode(t, created, DefaultFileMode)
		noTempFiles(t, real)
		noTempFiles(t, filepath.Join(dir, "new", "deeper"))
	})
}
