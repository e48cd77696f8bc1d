package checkpoint

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
)

// watchScript watches the workspace $1 with inotifywait, after checking
// that it has at most $2 directories (.git left out), and the cookies'
// directory $3 (settle.go), until its input closes (stop, or a dropped
// connection). It says on stderr how many
// directories it found before inotifywait says its watches are
// established; it prints an event's names, a NUL, its path and a NUL.
// A background job's input is /dev/null, so the job that waits for the
// input's end reads it through fd 3.
const watchScript = `command -v inotifywait >/dev/null 2>&1 || { echo "inotifywait (inotify-tools) is not installed" >&2; exit 127; }
n=$(find "$1" -name .git -prune -o -type d -print 2>/dev/null | head -n "$(($2 + 1))" | wc -l)
echo "directories $n" >&2
[ "$n" -le "$2" ] || exit 3
mkdir -p "$3" || exit
exec 3<&0
inotifywait -m -r --no-newline --format '%e%0%w%f%0' --exclude '/\.git(/|$)' \
	-e create -e modify -e attrib -e delete -e moved_from -e moved_to "$1" "$3" </dev/null 3<&- &
p=$!
{ cat <&3; kill "$p"; } >/dev/null 2>&1 &
wait "$p"`

// remoteEvent is one inotifywait record.
type remoteEvent struct{ names, path string }

// sshWatch is a Watch on an SSH host: inotifywait in one SSH session.
type sshWatch struct {
	s      *Store
	sess   *ssh.Session
	st     *settle
	filter ignoreFilter
	events chan remoteEvent
	dirs   int // directories watched, as far as the events tell

	mu     sync.Mutex
	stderr strings.Builder // the last of inotifywait's messages
}

func (s *Store) watchSSH(ctx context.Context, r SSH, report func([]Change, error)) (func(), error) {
	client, sess, err := r.session(ctx)
	if err != nil {
		return nil, err
	}
	stdin, err1 := sess.StdinPipe()
	stdout, err2 := sess.StdoutPipe()
	stderr, err3 := sess.StderrPipe()
	args := []string{"sh", "-c", watchScript, "sh", s.opt.Workspace, strconv.Itoa(s.maxWatchedDirs()), s.cookieDir()}
	// What the login's startup files print comes before the mark.
	token := rand.Text()
	if err := errors.Join(err1, err2, err3); err == nil {
		err = sess.Start("printf '\\000%s\\000' " + token + "; " + commandLine(args, nil))
	}
	if err != nil {
		sess.Close()
		return nil, fmt.Errorf("checkpoint: watching %s on %s: %w", s.opt.Workspace, client.RemoteAddr(), err)
	}
	sw := &sshWatch{s: s, sess: sess, st: &settle{dir: s.cookieDir()}, filter: ignoreFilter{s: s, ignored: map[string]bool{}},
		events: make(chan remoteEvent, 256)}
	ready := make(chan int, 1)
	exited := make(chan error, 1)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { sw.readStderr(stderr, ready) })
	wg.Go(func() { sw.readEvents(ctx, stdout, token) })
	wg.Go(func() { exited <- sess.Wait() })
	stopSession := sync.OnceFunc(func() {
		_ = stdin.Close()
		_ = sess.Close()
	})
	select {
	case sw.dirs = <-ready:
	case err := <-exited:
		cancel()
		stopSession()
		wg.Wait()
		return nil, sw.failed(client, err)
	case <-ctx.Done():
		err := ctx.Err()
		cancel()
		stopSession()
		wg.Wait()
		return nil, err
	}
	s.follow(sw.st)
	out := newReporter(&sw.filter, report)
	out.expand = sw.listNew
	wg.Go(func() { out.run(ctx, cancel) })
	wg.Go(func() {
		defer s.unfollow(sw.st)
		defer close(out.queue)
		sw.run(ctx, exited, out)
		stopSession()
	})
	return sync.OnceFunc(func() {
		cancel()
		stopSession()
		wg.Wait()
	}), nil
}

// readStderr keeps inotifywait's last messages and sends on ready the
// number of directories once the watches are established.
func (sw *sshWatch) readStderr(r io.Reader, ready chan<- int) {
	lines := bufio.NewScanner(r)
	dirs := 0
	for lines.Scan() {
		line := lines.Text()
		if n, ok := strings.CutPrefix(line, "directories "); ok {
			dirs, _ = strconv.Atoi(strings.TrimSpace(n))
			continue
		}
		if line == "Watches established." {
			ready <- dirs
			continue
		}
		if strings.HasPrefix(line, "Setting up watches.") {
			continue
		}
		sw.mu.Lock()
		if sw.stderr.Len() < 4096 {
			sw.stderr.WriteString(line + "\n")
		}
		sw.mu.Unlock()
	}
}

// readEvents reads inotifywait's records, those after the mark token,
// until its output ends.
func (sw *sshWatch) readEvents(ctx context.Context, r io.Reader, token string) {
	defer close(sw.events)
	in := bufio.NewReader(r)
	for {
		field, err := in.ReadString(0)
		if err != nil {
			return
		}
		if field == token+"\x00" {
			break
		}
	}
	for {
		names, err := in.ReadString(0)
		if err != nil {
			return
		}
		p, err := in.ReadString(0)
		if err != nil {
			return
		}
		select {
		case sw.events <- remoteEvent{names: strings.TrimSuffix(names, "\x00"), path: strings.TrimSuffix(p, "\x00")}:
		case <-ctx.Done():
			return
		}
	}
}

// run turns the records into batches for out until ctx is done or
// inotifywait ends, which before ctx is an early end, reported.
func (sw *sshWatch) run(ctx context.Context, exited <-chan error, out *reporter) {
	for {
		b := batch{touches: touches{}}
		var lost bool
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-sw.events:
			if !ok {
				out.fail(ctx, sw.failed(nil, <-exited))
				return
			}
			lost = sw.handle(ev, &b)
		}
	drain:
		for len(b.touches) < maxWatchBatch && !lost {
			select {
			case ev, ok := <-sw.events:
				if !ok {
					break drain
				}
				lost = sw.handle(ev, &b)
			default:
				break drain
			}
		}
		switch {
		case lost:
			out.fail(ctx, fmt.Errorf("checkpoint: watching %s: inotifywait lost events (its queue overflowed)", sw.s.opt.Workspace))
			return
		case sw.dirs > sw.s.maxWatchedDirs():
			out.fail(ctx, sw.s.errTooManyDirs())
			return
		}
		// inotifywait watches a new directory before it reads on, so
		// what changes in it later has events of its own: counting the
		// directory is enough here, and the reporter lists its files.
		sw.st.add(sw.filter.count(&b))
		sw.st.came(b.cookies)
		if len(b.touches) > 0 || len(b.newDirs) > 0 {
			out.send(ctx, b)
		}
	}
}

// handle adds one record to b; a directory's only counts, and a new one
// is added to b.newDirs. It reports whether the record says events were
// lost.
func (sw *sshWatch) handle(ev remoteEvent, b *batch) (lost bool) {
	names := "," + ev.names + ","
	has := func(name string) bool { return strings.Contains(names, ","+name+",") }
	if has("Q_OVERFLOW") {
		return true
	}
	if name, ok := sw.st.isCookie(ev.path); ok {
		if has("CREATE") {
			b.cookies = append(b.cookies, name)
		}
		return false
	}
	rel, ok := strings.CutPrefix(ev.path, sw.s.opt.Workspace+"/")
	if !ok || rel == "" || inGitDir(rel) {
		return false
	}
	b.rules = b.rules || path.Base(rel) == ".gitignore"
	switch {
	case has("ISDIR"):
		if has("CREATE") || has("MOVED_TO") {
			sw.dirs++
			b.newDirs = append(b.newDirs, rel)
		} else if has("DELETE") || has("MOVED_FROM") {
			sw.dirs--
			b.dirsGone++
		}
	case has("CREATE"), has("MOVED_TO"):
		b.touches.add(rel, "A")
	case has("DELETE"), has("MOVED_FROM"):
		b.touches.add(rel, "D")
	case has("MODIFY"), has("ATTRIB"):
		b.touches.add(rel, "M")
	}
	return false
}

// listNewScript prints, NUL-terminated, what is not a directory under the
// directories it is given (relative to the workspace $1), .git left out.
const listNewScript = `cd "$1" || exit 1; shift; find "$@" -name .git -prune -o ! -type d -print0 2>/dev/null; exit 0`

// listNew adds to batch, as created, the files already in new
// directories: inotifywait watches a new directory only once it is
// there, so what was made in it at once has no event.
func (sw *sshWatch) listNew(ctx context.Context, dirs []string, batch touches) error {
	for len(dirs) > 0 {
		args := []string{"sh", "-c", listNewScript, "sh", sw.s.opt.Workspace}
		n := 0
		for len(dirs) > 0 && n < sizeBatch {
			args = append(args, "./"+dirs[0])
			n += len(dirs[0]) + 3
			dirs = dirs[1:]
		}
		out, err := sw.s.opt.Runner.Run(ctx, args, nil, nil)
		if err != nil {
			return sw.s.fail("listing new directories", err)
		}
		for _, p := range splitZ(out) {
			batch.add(strings.TrimPrefix(p, "./"), "A")
		}
	}
	return nil
}

// failed is the error of a watch whose inotifywait ended: not installed
// (exec.ErrNotFound), too many directories, or its own message.
func (sw *sshWatch) failed(client *ssh.Client, err error) error {
	host := ""
	if client != nil {
		host = " on " + client.RemoteAddr().String()
	}
	sw.mu.Lock()
	msg := strings.TrimSpace(sw.stderr.String())
	sw.mu.Unlock()
	if exit, ok := errors.AsType[*ssh.ExitError](err); ok {
		switch exit.ExitStatus() {
		case 127:
			return fmt.Errorf("checkpoint: watching %s%s: %w: %s", sw.s.opt.Workspace, host, exec.ErrNotFound, msg)
		case 3:
			return sw.s.errTooManyDirs()
		}
	}
	if err == nil {
		err = errors.New("inotifywait ended")
	}
	return fmt.Errorf("checkpoint: watching %s%s: %w: %s", sw.s.opt.Workspace, host, err, msg)
}
