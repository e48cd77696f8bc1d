package fsroot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/sshtest"
	"github.com/acphost/acphost/sshconn"
)

// manualPolls drives an SFTP root's Watch polls in place of its ticker.
type manualPolls struct {
	tick chan time.Time
	// done has room for one signal, so a poll that ends after the test gave
	// up waiting does not block the watcher.
	done chan struct{}
}

// drivePolls makes r's watchers poll only when the test says so; call it
// before Watch.
func drivePolls(r *SFTP) *manualPolls {
	m := &manualPolls{tick: make(chan time.Time), done: make(chan struct{}, 1)}
	r.pollTicker = func(time.Duration) (<-chan time.Time, func()) { return m.tick, func() {} }
	r.polled = func() { m.done <- struct{}{} }
	return m
}

// poll runs one poll and returns once its events are in the watch channel:
// the watcher taking the tick only means the poll has started.
func (m *manualPolls) poll(t *testing.T) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	select {
	case m.tick <- time.Now():
	case <-timeout:
		t.Fatal("watcher did not take the tick")
	}
	select {
	case <-m.done:
	case <-timeout:
		t.Fatal("the poll did not send its events")
	}
}

// expectPolled fails unless ch holds exactly want, in order (a poll sends
// its events sorted by path); after manualPolls.poll it holds all that poll
// sent.
func expectPolled(t *testing.T, ch <-chan Event, what string, want ...Event) {
	t.Helper()
	var got []Event
	for more := true; more; {
		select {
		case e := <-ch:
			got = append(got, e)
		default:
			more = false
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s reported %v, want %v", what, got, want)
	}
}

// destination returns the login and address of a test server.
func destination(t testing.TB, user, addr string) sshconn.Destination {
	t.Helper()
	d, err := sshconn.Parse(user + "@" + addr)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func newSFTPRoot(t *testing.T, cwd string, opts *Options) (*SFTP, *sshtest.Server) {
	t.Helper()
	srv := sshtest.Start(t, nil)
	r, err := NewSFTP(ctx, srv.Dial(t), cwd, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r, srv
}

func TestSFTPWatchPolls(t *testing.T) {
	cwd := tempDir(t)
	existing := filepath.Join(cwd, "existing.txt")
	writeFile(t, existing, "v1")
	writeFile(t, filepath.Join(cwd, "old", "gone.txt"), "g")
	r, _ := newSFTPRoot(t, cwd, nil)
	polls := drivePolls(r)
	ch, err := r.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}

	created := filepath.Join(cwd, "new.txt")
	writeFile(t, created, "x")
	if err := os.WriteFile(existing, []byte("version 2"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(cwd, "old")); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(cwd, "sub")
	writeFile(t, filepath.Join(sub, "inner.txt"), "in")
	// A new directory is listed in the same poll while the entry budget
	// lasts, its content all new.
	polls.poll(t)
	expectPolled(t, ch, "the first poll",
		Event{Changed, existing}, Event{Created, created}, Event{Removed, filepath.Join(cwd, "old")},
		Event{Created, sub}, Event{Created, filepath.Join(sub, "inner.txt")})
	polls.poll(t)
	expectPolled(t, ch, "a poll with nothing changed")
}

func TestSFTPWatchBoundsEntriesPerPoll(t *testing.T) {
	cwd := tempDir(t)
	for _, d := range []string{"a", "b", "c"} {
		writeFile(t, filepath.Join(cwd, d, "f.txt"), "1")
	}
	r, _ := newSFTPRoot(t, cwd, &Options{PollMaxEntries: 1})
	polls := drivePolls(r)
	ch, err := r.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Budget 1: the first pass lists only cwd (3 entries); a, b, c are then
	// listed one per poll, in name order. A change in c is seen only on the
	// poll that reaches c; one made before c's first listing, not at all.
	cf := filepath.Join(cwd, "c", "f.txt")
	if err := os.WriteFile(cf, []byte("22"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"a", "b", "c"} {
		polls.poll(t)
		expectPolled(t, ch, "the first poll of "+dir)
	}
	if err := os.WriteFile(cf, []byte("333"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"cwd", "a", "b"} {
		polls.poll(t)
		expectPolled(t, ch, "the poll of "+dir+", before reaching c,")
	}
	polls.poll(t)
	expectPolled(t, ch, "the poll of c", Event{Changed, cf})
}

// Servers list a directory in their own order (ext4 by a per-disk hash,
// tmpfs newest first); a poll queues subdirectories in name order anyway.
func TestSFTPWatchQueuesSubdirectoriesInNameOrder(t *testing.T) {
	cwd := tempDir(t)
	var listing []fs.FileInfo
	for _, name := range []string{"c", "a", "b"} {
		p := filepath.Join(cwd, name)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		listing = append(listing, info)
	}
	pw := &pollWatch{listing: make(map[string]map[string]stamp), fresh: make(map[string]bool)}
	pw.compare(cwd, listing)
	want := []string{filepath.Join(cwd, "a"), filepath.Join(cwd, "b"), filepath.Join(cwd, "c")}
	if !slices.Equal(pw.queue, want) {
		t.Fatalf("queue = %v, want %v", pw.queue, want)
	}
}

func TestSFTPRenameFallbackWithoutPosixRename(t *testing.T) {
	cwd := tempDir(t)
	p := filepath.Join(cwd, "f.txt")
	writeFile(t, p, "old")
	r, _ := newSFTPRoot(t, cwd, nil)
	r.noPosixRename = true
	if err := r.WriteTextFile(ctx, p, "new"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); got != "new" {
		t.Fatalf("content = %q", got)
	}
	noTempFiles(t, cwd)
}

// A server without limits@openssh.com (pkg/sftp's) gets requests of the
// size every server answers in full; larger ones would come back short
// and leave holes in a concurrent read.
func TestSFTPSmallPacketsWithoutLimitsExtension(t *testing.T) {
	cwd := tempDir(t)
	r, _ := newSFTPRoot(t, cwd, nil)
	var b strings.Builder
	for i := 0; b.Len() < 3*sftpLargePacket; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	p := filepath.Join(cwd, "big.txt")
	writeFile(t, p, b.String())
	if got, err := r.ReadTextFile(ctx, p, 0, 0); err != nil || got != b.String() {
		t.Fatalf("read %d bytes (%v), want the %d on disk", len(got), err, b.Len())
	}
	if r.packet != sftpPacket {
		t.Fatalf("packet = %d bytes, want %d", r.packet, sftpPacket)
	}
}

func TestSFTPFixedClientReportsLostConnection(t *testing.T) {
	cwd := tempDir(t)
	p := filepath.Join(cwd, "f.txt")
	writeFile(t, p, "x")
	srv := sshtest.Start(t, nil)
	client := srv.Dial(t)
	r, err := NewSFTP(ctx, client, cwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	srv.DropConnections()
	_ = client.Wait()
	_, err = r.ReadTextFile(ctx, p, 0, 0)
	if !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("error = %v, want ErrConnectionLost", err)
	}
}

func TestSFTPConnRedialsAfterDrop(t *testing.T) {
	cwd := tempDir(t)
	p := filepath.Join(cwd, "f.txt")
	writeFile(t, p, "hello")
	srv := sshtest.Start(t, nil)
	conn := sshconn.New(destination(t, srv.User, srv.Addr), sshconn.Config{
		KeyFiles: []string{srv.UserKeyFile}, KnownHostsFiles: []string{srv.KnownHostsFile}, NoAgent: true,
	})
	defer conn.Close()
	r, err := NewSFTPConn(ctx, conn, cwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, err := r.ReadTextFile(ctx, p, 0, 0); err != nil || got != "hello" {
		t.Fatalf("first read %q, %v", got, err)
	}
	dead := conn.Dead()
	srv.DropConnections()
	<-dead
	if got, err := r.ReadTextFile(ctx, p, 0, 0); err != nil || got != "hello" {
		t.Fatalf("read after drop %q, %v", got, err)
	}
	if err := r.WriteTextFile(ctx, p, "again"); err != nil {
		t.Fatal(err)
	}
	if srv.Accepted() != 2 {
		t.Fatalf("server accepted %d connections, want 2 (one re-dial)", srv.Accepted())
	}
}

func TestSFTPConnMidOperationDropThenRecovers(t *testing.T) {
	cwd := tempDir(t)
	p := filepath.Join(cwd, "f.txt")
	writeFile(t, p, "hello")
	srv := sshtest.Start(t, nil)
	conn := sshconn.New(destination(t, srv.User, srv.Addr), sshconn.Config{
		KeyFiles: []string{srv.UserKeyFile}, KnownHostsFiles: []string{srv.KnownHostsFile}, NoAgent: true,
	})
	defer conn.Close()
	r, err := NewSFTPConn(ctx, conn, cwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// Whether the drop is noticed before or during the next read, at most
	// that one read fails, with ErrConnectionLost; the one after works.
	dead := conn.Dead()
	srv.DropConnections()
	if _, err := r.ReadTextFile(ctx, p, 0, 0); err != nil && !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("read during drop: %v", err)
	}
	<-dead
	if got, err := r.ReadTextFile(ctx, p, 0, 0); err != nil || got != "hello" {
		t.Fatalf("read after drop %q, %v", got, err)
	}
}
