package fsroot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// SFTP is a Root on an SSH host, served over the SFTP subsystem.
//
// Confinement resolves symlinks itself, one lstat/readlink per path
// component, because not every server's realpath follows links. Unlike
// Local, SFTP offers no openat-style confinement, so a symlink swapped in on
// the server between the check and the use is not caught; the agent runs on
// that host anyway and can touch its files directly.
type SFTP struct {
	*core
	source func(context.Context) (*ssh.Client, error)

	mu        sync.Mutex
	sshClient *ssh.Client
	client    *sftp.Client
	// packet is the payload size of client's read and write requests.
	packet int

	watchers sync.WaitGroup

	// Test seams: noPosixRename pretends the server lacks
	// posix-rename@openssh.com; pollTicker replaces the Watch poll ticker;
	// polled, when set, runs after each ticked poll has sent its events, so
	// a test knows which poll reported what; collectEvery, when not 0,
	// replaces sftpCollectEvery.
	noPosixRename bool
	pollTicker    func(time.Duration) (<-chan time.Time, func())
	polled        func()
	collectEvery  int
}

var _ Root = (*SFTP)(nil)

// NewSFTP returns a root for the directory cwd on the host of client. The
// client is used as is: if it dies, operations fail with ErrConnectionLost.
// The caller keeps ownership of client; Close does not close it. opts may
// be nil.
func NewSFTP(ctx context.Context, client *ssh.Client, cwd string, opts *Options) (*SFTP, error) {
	return newSFTP(ctx, func(context.Context) (*ssh.Client, error) { return client, nil }, cwd, opts)
}

// SSHConn is an SSH connection that is dialled again after it dies: Client
// returns the client to use now. *sshconn.Conn is one; fsroot takes the
// interface so that it does no dialling of its own.
type SSHConn interface {
	Client(ctx context.Context) (*ssh.Client, error)
}

// NewSFTPConn returns a root for the directory cwd on the host of conn. An
// operation that finds the connection dropped fails with ErrConnectionLost
// and the next one asks conn for a client again, which re-dials. Close does
// not close conn. opts may be nil.
func NewSFTPConn(ctx context.Context, conn SSHConn, cwd string, opts *Options) (*SFTP, error) {
	return newSFTP(ctx, conn.Client, cwd, opts)
}

func newSFTP(ctx context.Context, source func(context.Context) (*ssh.Client, error), cwd string, opts *Options) (*SFTP, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &SFTP{source: source}
	c, err := newCore(ctx, sftpFS{s}, cwd, o)
	if err != nil {
		s.closeClient()
		return nil, err
	}
	s.core = c
	return s, nil
}

// Close stops every watcher and ends the SFTP session (not the SSH client).
func (s *SFTP) Close() error {
	s.closeOnce.Do(func() { close(s.done) })
	s.watchers.Wait()
	return s.closeClient()
}

func (s *SFTP) closeClient() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client == nil {
		return nil
	}
	err := s.client.Close()
	s.client, s.sshClient = nil, nil
	return err
}

// sftpClient returns an SFTP session on the current SSH client, opening a
// new one when the SSH client changed (after a re-dial).
func (s *SFTP) sftpClient(ctx context.Context) (*sftp.Client, error) {
	if s.core != nil && s.isClosed() {
		return nil, ErrClosed
	}
	sshClient, err := s.source(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client != nil && s.sshClient == sshClient {
		return s.client, nil
	}
	if s.client != nil {
		_ = s.client.Close()
		s.client = nil
	}
	client, err := sftp.NewClient(sshClient, sftpClientOptions()...)
	if err != nil {
		return nil, s.lost(nil, err)
	}
	s.packet = sftpPacket
	if _, ok := client.HasExtension(sftpLimitsExtension); ok {
		// Options are functions of the client: applied before anyone else
		// has it, they change the sizes of every transfer to come.
		for _, o := range largePacketOptions() {
			if err := o(client); err != nil {
				_ = client.Close()
				return nil, err
			}
		}
		s.packet = sftpLargePacket
	}
	s.client, s.sshClient = client, sshClient
	return client, nil
}

// sftpClientOptions pipeline large transfers: a read or write of a whole
// file is cut into MaxPacket requests with up to sftpRequestsPerFile in
// flight, where one request at a time would wait a round trip per packet.
// Concurrent writes may leave a longer file after an error, which cannot
// matter here: writes go to a temporary file that is removed on error.
func sftpClientOptions() []sftp.ClientOption {
	return []sftp.ClientOption{
		sftp.UseConcurrentReads(true),
		sftp.UseConcurrentWrites(true),
		sftp.MaxConcurrentRequestsPerFile(sftpRequestsPerFile),
		sftp.MaxPacket(sftpPacket),
	}
}

// largePacketOptions move sftpLargePacket per request, with as many
// requests in flight as make the same bytes as sftpClientOptions. They are
// for a server that offers limits@openssh.com: OpenSSH's sftp-server,
// since it offers that extension (8.6), takes messages of 256 KiB and
// answers a read of up to 1 KiB less in full, and OpenSSH's sftp then
// moves that much per request too. Eight times fewer requests cost the client, the
// server and the SSH layer less per byte (a 200 MiB read over a loopback
// sshd: a quarter less CPU in the client).
//
// pkg/sftp cannot ask the server for its limits, so the extension's
// presence is the sign: a read answered with fewer bytes than asked would
// leave a hole in a concurrent read, which is why a server without the
// extension gets sftpPacket, the size every server must answer in full.
func largePacketOptions() []sftp.ClientOption {
	return []sftp.ClientOption{
		sftp.MaxConcurrentRequestsPerFile(sftpRequestsPerFile * sftpPacket / sftpLargePacket),
		sftp.MaxPacketUnchecked(sftpLargePacket),
	}
}

// sftpPacket is the largest payload every server must accept; OpenSSH's
// sftp uses it too on a server without limits@openssh.com.
// sftpRequestsPerFile matches OpenSSH's sftp default of 64 outstanding
// requests: 2 MiB in flight, the SSH channel window of both x/crypto and
// OpenSSH, beyond which more requests only wait.
const (
	sftpPacket          = 32 << 10
	sftpRequestsPerFile = 64
	sftpLargePacket     = 255 << 10
	sftpLimitsExtension = "limits@openssh.com"
)

// lost turns an error that means the connection is gone into one wrapping
// ErrConnectionLost, and drops the broken session so the next operation
// starts a new one. Other errors pass through.
func (s *SFTP) lost(client *sftp.Client, err error) error {
	if err == nil || !isConnectionError(err) {
		return err
	}
	s.mu.Lock()
	if client != nil && s.client == client {
		_ = s.client.Close()
		s.client, s.sshClient = nil, nil
	}
	s.mu.Unlock()
	return fmt.Errorf("%w: %v", ErrConnectionLost, err)
}

func isConnectionError(err error) bool {
	return errors.Is(err, sftp.ErrSSHFxConnectionLost) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrClosed)
}

// do runs op on the current SFTP session and classifies its error.
func (s *SFTP) do(ctx context.Context, op func(*sftp.Client) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	client, err := s.sftpClient(ctx)
	if err != nil {
		return err
	}
	return s.lost(client, op(client))
}

// sftpFS is the fsys of an SFTP root.
type sftpFS struct{ s *SFTP }

func (b sftpFS) lstat(ctx context.Context, abs string) (info fs.FileInfo, err error) {
	err = b.s.do(ctx, func(c *sftp.Client) error {
		info, err = c.Lstat(abs)
		return err
	})
	return info, err
}

func (b sftpFS) readlink(ctx context.Context, abs string) (dest string, err error) {
	err = b.s.do(ctx, func(c *sftp.Client) error {
		dest, err = c.ReadLink(abs)
		return err
	})
	return dest, err
}

func (b sftpFS) readFile(ctx context.Context, t target, max int64) (text string, err error) {
	err = b.s.do(ctx, func(c *sftp.Client) error {
		// Stat before open: opening a FIFO would stall the server.
		info, err := c.Stat(t.abs())
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return ErrNotRegular
		}
		if info.Size() > max {
			return tooLarge(info.Size(), max)
		}
		f, err := c.Open(t.abs())
		if err != nil {
			return err
		}
		defer f.Close()
		// WriteTo keeps sftpRequestsPerFile MaxPacket reads in flight from
		// the start of the file to its end, and writes what they bring in
		// order, so the file crosses the wire without a round trip per
		// packet and each packet goes into the text while it is in the
		// cache.
		every := sftpCollectEvery
		if b.s.collectEvery != 0 {
			every = b.s.collectEvery
		}
		sink := newTextSink(info.Size(), max)
		if _, err := f.WriteTo(&collectingWriter{w: sink, every: every}); err != nil {
			return err
		}
		text, err = sink.end()
		return err
	})
	return text, err
}

func (b sftpFS) mkdir(ctx context.Context, t target, perm fs.FileMode) error {
	return b.s.do(ctx, func(c *sftp.Client) error {
		if err := c.Mkdir(t.abs()); err != nil {
			return err
		}
		return c.Chmod(t.abs(), perm)
	})
}

func (b sftpFS) create(ctx context.Context, t target) (f tempFile, err error) {
	err = b.s.do(ctx, func(c *sftp.Client) error {
		file, err := c.OpenFile(t.abs(), os.O_WRONLY|os.O_CREATE|os.O_EXCL)
		if err != nil {
			return err
		}
		f = sftpTemp{file}
		return nil
	})
	return f, err
}

// sftpTemp adapts *sftp.File: fsync is an OpenSSH extension, and a server
// without it (the pkg/sftp server, for one) still gets the atomic rename.
type sftpTemp struct{ *sftp.File }

func (f sftpTemp) Sync() error {
	err := f.File.Sync()
	var status *sftp.StatusError
	if errors.As(err, &status) && status.FxCode() == sftp.ErrSSHFxOpUnsupported {
		return nil
	}
	return err
}

func (f sftpTemp) Write(p []byte) (int, error) { return f.File.Write(p) }

func (f sftpTemp) ReadFrom(r io.Reader) (int64, error) { return f.File.ReadFrom(r) }

// WriteString sends s with concurrent write requests, reading it through
// one MaxPacket buffer, where io.WriteString would convert all of s to a
// second copy and a plain Write would wait a round trip per packet.
func (f sftpTemp) WriteString(s string) (int, error) {
	// strings.Reader has Len, which is what lets ReadFrom go concurrent.
	n, err := f.File.ReadFrom(strings.NewReader(s))
	return int(n), err
}

func (b sftpFS) rename(ctx context.Context, from, to target) error {
	return b.s.do(ctx, func(c *sftp.Client) error {
		if _, ok := c.HasExtension("posix-rename@openssh.com"); ok && !b.s.noPosixRename {
			return c.PosixRename(from.abs(), to.abs())
		}
		return renameFallback(c, from.abs(), to.abs())
	})
}

// renameFallback replaces newPath without posix-rename. A plain SFTP rename
// refuses to overwrite on OpenSSH (it links, then unlinks), so when it fails
// and newPath exists, the old file is first moved aside to a backup name in
// the same directory, the new one renamed in, and the backup removed. A
// reader may briefly find no file, but never a partial one, and if the
// second rename fails the backup is moved back, so the old content survives.
func renameFallback(c *sftp.Client, oldPath, newPath string) error {
	err := c.Rename(oldPath, newPath)
	if err == nil {
		return nil
	}
	if _, statErr := c.Lstat(newPath); statErr != nil {
		return err
	}
	backup := strings.TrimSuffix(oldPath, ".tmp") + ".old.tmp"
	if err := c.Rename(newPath, backup); err != nil {
		return err
	}
	if err := c.Rename(oldPath, newPath); err != nil {
		if restoreErr := c.Rename(backup, newPath); restoreErr != nil {
			return fmt.Errorf("%w; restoring %s from %s also failed: %v", err, newPath, backup, restoreErr)
		}
		return err
	}
	_ = c.Remove(backup)
	return nil
}

func (b sftpFS) remove(ctx context.Context, t target) error {
	return b.s.do(ctx, func(c *sftp.Client) error { return c.Remove(t.abs()) })
}

// syncDir has no SFTP request; the server's rename is as durable as the
// server makes it.
func (b sftpFS) syncDir(context.Context, target) error { return nil }

// checkWritable asks the server to open the file for writing, without
// truncating or creating it. The server opens it as the remote user, so the
// answer is that user's real permission; comparing mode bits with a uid we
// would have to guess (and without its groups or ACLs) would not be.
func (b sftpFS) checkWritable(ctx context.Context, t target) error {
	return b.s.do(ctx, func(c *sftp.Client) error {
		f, err := c.OpenFile(t.abs(), os.O_WRONLY)
		if err != nil {
			return err
		}
		return f.Close()
	})
}
