package fsroot

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acphost/acphost/internal/sshdtest"
	"github.com/acphost/acphost/internal/sshtest"
	"golang.org/x/crypto/ssh"
)

// The large-file benchmarks measure a root against its floor in the same
// run and report the ratio (floor time / our time, so 1.0 is the floor's
// speed and more is faster):
//
//	ACPHOST_BENCH_MIB=200 go test -run '^$' -bench 'Local|SSHD' -benchtime 5x ./fsroot
//
// Peak memory is the growth during one operation, after
// debug.FreeOSMemory, of the process's VmHWM over its VmRSS (VmHWM reset
// through /proc/self/clear_refs) and of the Go heap in use, each divided by
// the file size (reportPeak); a read's includes the returned text itself.

// benchCipher is used by both our client and OpenSSH's sftp, so the
// comparison is of the SFTP paths and not of two ciphers.
const benchCipher = ssh.CipherAES128GCM

// benchSize is the file size of the large-file benchmarks, in bytes:
// ACPHOST_BENCH_MIB MiB, 64 by default.
func benchSize(b *testing.B) int {
	mib := 64
	if s := os.Getenv("ACPHOST_BENCH_MIB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("ACPHOST_BENCH_MIB=%q: want a positive number of MiB", s)
		}
		mib = n
	}
	return mib << 20
}

// benchContent is size bytes of 100-byte ASCII lines.
func benchContent(size int) string {
	line := strings.Repeat("x", 99) + "\n"
	return strings.Repeat(line, size/len(line)+1)[:size]
}

// benchSource is a page of source code as it is often written: ASCII
// lines, some with comments or strings in other scripts (2- and 3-byte
// runes) and the odd emoji (4 bytes); about 8% of its bytes are not ASCII.
const benchSource = `// Package parse reads the configuration of a build.
package parse

import (
	"errors"
	"strings"
)

// Lire la configuration : les clés sont triées, les valeurs gardées telles quelles.
func Parse(text string) (map[string]string, error) {
	out := make(map[string]string)
	for i, line := range strings.Split(text, "\n") {
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, errors.New("строка без знака равенства") // Russian: a line without "="
		}
		// 設定ファイルの各行はキーと値の組です。
		out[strings.TrimSpace(key)] = strings.TrimSpace(value)
		_ = i
	}
	return out, nil
}

func greet(name string) string {
	return "¡Hola, " + name + "! 👋 ça va? → " + strings.ToUpper(name)
}

// sum adds the values; an empty slice sums to zero, as one would expect.
func sum(values []int) (total int) {
	for _, v := range values {
		total += v
	}
	return total
}

// indexOf returns the position of want in values, or -1 when it is absent.
func indexOf(values []string, want string) int {
	for i, v := range values {
		if v == want {
			return i
		}
	}
	return -1
}

type cache struct {
	entries map[string][]byte
	limit   int
}

func (c *cache) put(key string, value []byte) {
	if len(c.entries) >= c.limit {
		for k := range c.entries {
			delete(c.entries, k)
			break
		}
	}
	c.entries[key] = value
}

`

// benchProse is CJK prose: 3-byte runes with a few ASCII line breaks.
const benchProse = "天地玄黄，宇宙洪荒。日月盈昃，辰宿列张。寒来暑往，秋收冬藏。闰余成岁，律吕调阳。" +
	"云腾致雨，露结为霜。金生丽水，玉出昆冈。剑号巨阙，珠称夜光。果珍李柰，菜重芥姜。\n" +
	"吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。何でも薄暗いじめじめした所で泣いていた事だけは記憶している。\n"

// benchText is size bytes of unit repeated, cut at a rune boundary and
// padded with newlines, so it is valid UTF-8 of exactly size bytes.
func benchText(unit string, size int) string {
	text := strings.Repeat(unit, size/len(unit)+1)[:size]
	for len(text) > 0 && !utf8.ValidString(text[len(text)-utf8.UTFMax+1:]) {
		text = text[:len(text)-1]
	}
	return text + strings.Repeat("\n", size-len(text))
}

// benchCorpora are the kinds of text the read benchmarks read: the UTF-8
// check costs more the more of a file is not ASCII.
var benchCorpora = []struct{ name, unit string }{
	{"ascii", strings.Repeat("x", 99) + "\n"},
	{"source", benchSource},
	{"cjk", benchProse},
}

func benchDir(b *testing.B) string {
	d, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// versus runs ours and floor alternately, b.N times each, swapping which
// goes first every round, and reports floor/ours as "x-<name>" and both
// throughputs in MiB/s. Each returns the time it took.
func versus(b *testing.B, size int, name string, ours, floor func() time.Duration) {
	b.Helper()
	var tOurs, tFloor time.Duration
	rounds := 0
	for b.Loop() {
		if rounds%2 == 0 {
			tOurs += ours()
			tFloor += floor()
		} else {
			tFloor += floor()
			tOurs += ours()
		}
		rounds++
	}
	b.ReportMetric(float64(tFloor)/float64(tOurs), "x-"+name)
	mib := float64(rounds) * float64(size) / (1 << 20)
	b.ReportMetric(mib/tOurs.Seconds(), "MiB/s")
	b.ReportMetric(mib/tFloor.Seconds(), "MiB/s-"+name)
}

// timed returns f as a function that reports how long it took.
func timed(f func()) func() time.Duration {
	return func() time.Duration {
		start := time.Now()
		f()
		return time.Since(start)
	}
}

// reportPeak runs op once and reports how much the process's memory grew
// during it, as multiples of size: "peak-rss-x" from the peak resident
// size (VmHWM, reset before op), "peak-heap-x" from the Go heap in use
// (HeapInuse, the objects and the unused room of their spans) as a
// sampler saw it every 200µs.
func reportPeak(b *testing.B, size int, op func()) {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("peak memory not measured: %v", err)
		return
	}
	heapBefore := heapInuse()
	before := procStatusKiB(b, "VmRSS")
	stop, heapPeak := sampleHeap()
	op()
	stop()
	peak := procStatusKiB(b, "VmHWM")
	b.ReportMetric(float64(peak-before)*1024/float64(size), "peak-rss-x")
	b.ReportMetric(float64(*heapPeak-heapBefore)/float64(size), "peak-heap-x")
}

// sampleHeap samples heapInuse until stop, which returns when the sampler
// has ended; *peak is then the largest value seen.
func sampleHeap() (stop func(), peak *uint64) {
	peak = new(uint64)
	*peak = heapInuse()
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			*peak = max(*peak, heapInuse())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-ended; *peak = max(*peak, heapInuse()) }, peak
}

// heapInuse is runtime.MemStats.HeapInuse, read without stopping the world.
func heapInuse() uint64 {
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
	}
	metrics.Read(samples)
	return samples[0].Value.Uint64() + samples[1].Value.Uint64()
}

func procStatusKiB(b *testing.B, field string) int64 {
	b.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), field+":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			b.Fatalf("%s: %v", field, err)
		}
		return n
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// BenchmarkLocalRead reads a large file through a Local root against
// os.ReadFile of the same file, for each of benchCorpora.
func BenchmarkLocalRead(b *testing.B) {
	size := benchSize(b)
	cwd := benchDir(b)
	r, err := NewLocal(cwd, &Options{MaxFileSize: int64(size)})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for _, corpus := range benchCorpora {
		b.Run(corpus.name, func(b *testing.B) {
			p := filepath.Join(cwd, corpus.name+".txt")
			if err := os.WriteFile(p, []byte(benchText(corpus.unit, size)), 0o644); err != nil {
				b.Fatal(err)
			}
			defer os.Remove(p)
			read := func() {
				got, err := r.ReadTextFile(ctx, p, 0, 0)
				if err != nil || len(got) != size {
					b.Fatalf("read %d bytes, %v", len(got), err)
				}
			}
			versus(b, size, "os.ReadFile", timed(read), timed(func() {
				if got, err := os.ReadFile(p); err != nil || len(got) != size {
					b.Fatalf("os.ReadFile: %d bytes, %v", len(got), err)
				}
			}))
			reportPeak(b, size, read)
		})
	}
}

// BenchmarkLocalWrite writes a large file through a Local root (no floor:
// the atomic write's fsync dominates).
func BenchmarkLocalWrite(b *testing.B) {
	size := benchSize(b)
	cwd := benchDir(b)
	r, err := NewLocal(cwd, &Options{MaxFileSize: int64(size)})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	content := benchContent(size)
	b.SetBytes(int64(size))
	for b.Loop() {
		if err := r.WriteTextFile(ctx, filepath.Join(cwd, "big.txt"), content); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSFTPInProcess moves a large file through the pkg/sftp server of
// internal/sshtest (no floor: it profiles our side alone).
func BenchmarkSFTPInProcess(b *testing.B) {
	size := benchSize(b)
	srv := sshtest.Start(b, nil)
	cwd := benchDir(b)
	r, err := NewSFTP(ctx, srv.Dial(b), cwd, &Options{MaxFileSize: int64(size)})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	content := benchContent(size)
	p := filepath.Join(cwd, "big.txt")
	b.Run("write", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			if err := r.WriteTextFile(ctx, p, content); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			if got, err := r.ReadTextFile(ctx, p, 0, 0); err != nil || len(got) != size {
				b.Fatalf("read %d bytes, %v", len(got), err)
			}
		}
	})
}

// BenchmarkSFTPSSHD moves a large file through the SFTP root against
// OpenSSH's sftp client on the same loopback sshd with the same cipher.
// The floor's process start and login are measured in the same round (a
// batch that transfers nothing) and taken off, so only transfers are
// compared; its put is "put -f", which fsyncs like our atomic write.
func BenchmarkSFTPSSHD(b *testing.B) {
	sftpBin, err := exec.LookPath("sftp")
	if err != nil {
		b.Skip("sftp client not installed")
	}
	size := benchSize(b)
	srv := sshdtest.Start(b)
	cfg := srv.ClientConfig()
	cfg.Ciphers = []string{benchCipher}
	client, err := ssh.Dial("tcp", srv.Addr, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	dir := benchDir(b)
	r, err := NewSFTP(ctx, client, dir, &Options{MaxFileSize: int64(size)})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	// Each side's read fetches what its write puts, so either sub-benchmark
	// can run alone.
	local, ours, theirs := filepath.Join(dir, "local.txt"), filepath.Join(dir, "ours.txt"), filepath.Join(dir, "theirs.txt")
	for _, p := range []string{local, ours, theirs} {
		if err := os.WriteFile(p, []byte(benchContent(size)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	sftpCmd := func(batch string) time.Duration {
		start := time.Now()
		cmd := exec.Command(sftpBin, "-q", "-b", "-", "-i", srv.KeyFile,
			"-o", "UserKnownHostsFile="+srv.KnownHostsFile, "-o", "StrictHostKeyChecking=yes",
			"-o", "BatchMode=yes", "-o", "Ciphers="+benchCipher,
			"-P", fmt.Sprint(srv.Port), srv.User+"@127.0.0.1")
		cmd.Stdin = strings.NewReader(batch)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("sftp: %v: %s", err, out)
		}
		return time.Since(start)
	}
	// transfer is the time of an sftp batch less that of one that only
	// logs in.
	transfer := func(batch string) func() time.Duration {
		return func() time.Duration {
			idle := sftpCmd("pwd\n")
			return sftpCmd(batch) - idle
		}
	}
	read := func() {
		if got, err := r.ReadTextFile(ctx, ours, 0, 0); err != nil || len(got) != size {
			b.Fatalf("read %d bytes, %v", len(got), err)
		}
	}
	b.Run("write", func(b *testing.B) {
		// Only the write keeps the content alive, so that the read's peak
		// is not measured on top of it.
		content := benchContent(size)
		write := func() {
			if err := r.WriteTextFile(ctx, ours, content); err != nil {
				b.Fatal(err)
			}
		}
		versus(b, size, "sftp", timed(write), transfer("put -f "+local+" "+theirs+"\n"))
		reportPeak(b, size, write)
	})
	b.Run("read", func(b *testing.B) {
		versus(b, size, "sftp", timed(read), transfer("get "+theirs+" "+filepath.Join(dir, "fetched.txt")+"\n"))
		reportPeak(b, size, read)
	})
}
