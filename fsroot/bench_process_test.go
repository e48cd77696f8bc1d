package fsroot

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/sshdtest"
	"github.com/acphost/acphost/sshconn"
)

// sftpClientEnv makes the test binary a one-shot SFTP client process
// (runSFTPClientIfAsked): "OP,PORT,USER,KEYFILE,KNOWNHOSTS,PATH,SIZE".
const sftpClientEnv = "ACPHOST_SFTPCLIENT"

// prepLabel starts the line on which the client process says how long it
// took to make a write's content, in nanoseconds.
const prepLabel = "content-made-ns"

// runSFTPClientIfAsked is what a program that uses the library does, as a
// process of its own: dial with sshconn's defaults, open an SFTP root, read
// or write one file, exit. BenchmarkSFTPProcess times it whole, process
// start and handshake included, against OpenSSH's sftp doing the same.
func runSFTPClientIfAsked() {
	v, ok := os.LookupEnv(sftpClientEnv)
	if !ok {
		return
	}
	if err := sftpClientProcess(strings.Split(v, ",")); err != nil {
		fmt.Fprintf(os.Stderr, "%s=%q: %v\n", sftpClientEnv, v, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func sftpClientProcess(f []string) error {
	if len(f) != 7 {
		return fmt.Errorf("want 7 fields, got %d", len(f))
	}
	op, user, keyFile, knownHosts, p := f[0], f[2], f[3], f[4], f[5]
	port, err := strconv.Atoi(f[1])
	if err != nil {
		return err
	}
	size, err := strconv.Atoi(f[6])
	if err != nil {
		return err
	}
	// A write's content is the app's, in memory before it writes: the
	// time to make it is printed and taken off the process's time.
	var content string
	if op == "write" {
		start := time.Now()
		content = benchContent(size)
		fmt.Printf("%s %d\n", prepLabel, time.Since(start))
	}
	ctx := context.Background()
	client, err := sshconn.Dial(ctx, sshconn.Destination{User: user, Host: "127.0.0.1", Port: port},
		sshconn.Config{KeyFiles: []string{keyFile}, KnownHostsFiles: []string{knownHosts}, NoAgent: true})
	if err != nil {
		return err
	}
	defer client.Close()
	r, err := NewSFTP(ctx, client, filepath.Dir(p), &Options{MaxFileSize: int64(size)})
	if err != nil {
		return err
	}
	defer r.Close()
	switch op {
	case "read":
		got, err := r.ReadTextFile(ctx, p, 0, 0)
		if err == nil && len(got) != size {
			err = fmt.Errorf("read %d bytes, want %d", len(got), size)
		}
		return err
	case "write":
		return r.WriteTextFile(ctx, p, content)
	}
	return fmt.Errorf("unknown op %q", op)
}

// BenchmarkSFTPProcess is the acceptance measurement of the SFTP rows: a
// process that reads (writes) a large file through an SFTP root, timed
// whole from its start to its exit, handshake included and every SSH
// setting left at the library's defaults, against OpenSSH's "sftp -b" with
// its own defaults doing a get (put) of the same size on the same loopback
// sshd, alternately in the same run:
//
//	ACPHOST_BENCH_MIB=200 go test -run '^$' -bench SFTPProcess -benchtime 5x ./fsroot
//
// "x-sftp" is sftp's whole time over ours (more is faster), per round,
// min/median/max over the rounds. A write's process first makes its
// content in memory, as the app that writes has it, and that time is
// taken off its own. "peak-MiB" is our process's peak resident size,
// "peak-MiB-sftp" sftp's (medians, from /usr/bin/time when installed);
// a write's includes the content.
//
// A read's process must fault in the pages of the text it returns, fresh
// memory of the file's size, which sftp, writing into the page cache,
// does not: on a virtual machine that is a large part of the read.
func BenchmarkSFTPProcess(b *testing.B) {
	sftpBin, err := exec.LookPath("sftp")
	if err != nil {
		b.Skip("sftp client not installed")
	}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	size := benchSize(b)
	srv := sshdtest.Start(b)
	dir := benchDir(b)
	local, ours, theirs := filepath.Join(dir, "local.txt"), filepath.Join(dir, "ours.txt"), filepath.Join(dir, "theirs.txt")
	for _, p := range []string{local, ours, theirs} {
		if err := os.WriteFile(p, []byte(benchContent(size)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// The peak RSS is /usr/bin/time's: a child's own ru_maxrss starts
	// from the peak of the process it was forked from, this one.
	timeBin, _ := exec.LookPath("/usr/bin/time")
	rssFile := filepath.Join(dir, "rss")
	command := func(name string, args ...string) *exec.Cmd {
		if timeBin == "" {
			return exec.Command(name, args...)
		}
		return exec.Command(timeBin, append([]string{"-f", "%M", "-o", rssFile, name}, args...)...)
	}
	run := func(cmd *exec.Cmd) (time.Duration, float64) {
		debug.FreeOSMemory()
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("%s: %v: %s", cmd.Args, err, out)
		}
		wall := time.Since(start)
		if _, rest, ok := strings.Cut(string(out), prepLabel+" "); ok {
			prep, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			wall -= time.Duration(prep)
		}
		kib, _ := os.ReadFile(rssFile)
		n, _ := strconv.ParseFloat(strings.TrimSpace(string(kib)), 64)
		return wall, n / 1024
	}
	ourCmd := func(op, p string) func() (time.Duration, float64) {
		return func() (time.Duration, float64) {
			cmd := command(exe)
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d,%s,%s,%s,%s,%d",
				sftpClientEnv, op, srv.Port, srv.User, srv.KeyFile, srv.KnownHostsFile, p, size))
			return run(cmd)
		}
	}
	theirCmd := func(batch string) func() (time.Duration, float64) {
		return func() (time.Duration, float64) {
			cmd := command(sftpBin, "-q", "-b", "-", "-i", srv.KeyFile,
				"-o", "UserKnownHostsFile="+srv.KnownHostsFile, "-o", "StrictHostKeyChecking=yes",
				"-o", "BatchMode=yes", "-F", "none", "-P", fmt.Sprint(srv.Port), srv.User+"@127.0.0.1")
			cmd.Stdin = strings.NewReader(batch)
			return run(cmd)
		}
	}
	b.Run("read", func(b *testing.B) {
		processVersus(b, ourCmd("read", ours), theirCmd("get "+theirs+" "+filepath.Join(dir, "fetched.txt")+"\n"))
	})
	b.Run("write", func(b *testing.B) {
		processVersus(b, ourCmd("write", ours), theirCmd("put "+local+" "+theirs+"\n"))
	})
}

// processVersus runs ours and theirs alternately, swapping which goes
// first every round, and reports theirs/ours per round as min, median and
// max ("x-sftp-min" …), and each side's median peak RSS.
func processVersus(b *testing.B, ours, theirs func() (time.Duration, float64)) {
	b.Helper()
	var ratios, rssOurs, rssTheirs []float64
	for b.Loop() {
		var to, tt time.Duration
		var mo, mt float64
		if len(ratios)%2 == 0 {
			to, mo = ours()
			tt, mt = theirs()
		} else {
			tt, mt = theirs()
			to, mo = ours()
		}
		ratios = append(ratios, tt.Seconds()/to.Seconds())
		rssOurs, rssTheirs = append(rssOurs, mo), append(rssTheirs, mt)
		b.Logf("round %d: ours %.3fs %.0f MiB, sftp %.3fs %.0f MiB, x-sftp %.3f", len(ratios), to.Seconds(), mo, tt.Seconds(), mt, ratios[len(ratios)-1])
	}
	lo, med, hi := minMedMax(ratios)
	b.ReportMetric(lo, "x-sftp-min")
	b.ReportMetric(med, "x-sftp")
	b.ReportMetric(hi, "x-sftp-max")
	_, m, _ := minMedMax(rssOurs)
	b.ReportMetric(m, "peak-MiB")
	_, m, _ = minMedMax(rssTheirs)
	b.ReportMetric(m, "peak-MiB-sftp")
}

func minMedMax(v []float64) (lo, med, hi float64) {
	s := append([]float64(nil), v...)
	slices.Sort(s)
	return s[0], s[len(s)/2], s[len(s)-1]
}
