package fsroot

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/internal/sshdtest"
	"github.com/acphost/acphost/internal/sshtest"
)

const benchSize = 10 << 20

func benchContent() string {
	line := strings.Repeat("x", 99) + "\n"
	return strings.Repeat(line, benchSize/len(line)+1)[:benchSize]
}

// benchRoot writes then reads a 10 MiB file through r, b.N times each.
func benchRoot(b *testing.B, r Root, cwd string) {
	content := benchContent()
	p := filepath.Join(cwd, "big.txt")
	b.Run("write", func(b *testing.B) {
		b.SetBytes(benchSize)
		for b.Loop() {
			if err := r.WriteTextFile(ctx, p, content); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		b.SetBytes(benchSize)
		for b.Loop() {
			got, err := r.ReadTextFile(ctx, p, 0, 0)
			if err != nil || len(got) != benchSize {
				b.Fatalf("read %d bytes, %v", len(got), err)
			}
		}
	})
}

func benchDir(b *testing.B) string {
	d, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func BenchmarkLocal(b *testing.B) {
	cwd := benchDir(b)
	r, err := NewLocal(cwd, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	benchRoot(b, r, cwd)
}

func BenchmarkSFTPInProcess(b *testing.B) {
	srv := sshtest.Start(b, nil)
	cwd := benchDir(b)
	r, err := NewSFTP(ctx, srv.Dial(b), cwd, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	benchRoot(b, r, cwd)
}

func BenchmarkSFTPSSHD(b *testing.B) {
	srv := sshdtest.Start(b)
	cwd := benchDir(b)
	r, err := NewSFTP(ctx, srv.Dial(b), cwd, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	benchRoot(b, r, cwd)
}

// BenchmarkSFTPCommandSSHD is the floor: OpenSSH's own sftp client moving
// the same 10 MiB over the same loopback sshd (one process start per
// transfer included).
func BenchmarkSFTPCommandSSHD(b *testing.B) {
	sftpBin, err := exec.LookPath("sftp")
	if err != nil {
		b.Skip("sftp client not installed")
	}
	srv := sshdtest.Start(b)
	dir := benchDir(b)
	local := filepath.Join(dir, "local.txt")
	if err := os.WriteFile(local, []byte(benchContent()), 0o644); err != nil {
		b.Fatal(err)
	}
	remote := filepath.Join(dir, "remote.txt")
	fetched := filepath.Join(dir, "fetched.txt")
	run := func(b *testing.B, batch string) {
		batchFile := filepath.Join(dir, "batch")
		if err := os.WriteFile(batchFile, []byte(batch), 0o644); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(sftpBin, "-q", "-b", batchFile, "-i", srv.KeyFile,
			"-o", "UserKnownHostsFile="+srv.KnownHostsFile, "-o", "StrictHostKeyChecking=yes",
			"-o", "BatchMode=yes", "-P", fmt.Sprint(srv.Port), srv.User+"@127.0.0.1")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("sftp: %v: %s", err, out)
		}
	}
	b.Run("put", func(b *testing.B) {
		b.SetBytes(benchSize)
		for b.Loop() {
			run(b, "put "+local+" "+remote+"\n")
		}
	})
	b.Run("get", func(b *testing.B) {
		b.SetBytes(benchSize)
		for b.Loop() {
			run(b, "get "+remote+" "+fetched+"\n")
		}
	})
}
