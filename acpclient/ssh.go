package acpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// SSHTransport runs an agent on a remote host over an SSH connection and
// speaks ACP over the remote command's stdin and stdout. The agent's own
// tools then run on that host.
//
// The remote command runs under a small POSIX sh wrapper that puts the agent
// in a session of its own and watches the agent's stdin: when it ends,
// because Close closed it or because the SSH connection dropped, the agent
// gets StopTimeout to exit, then SIGTERM to its process group, then SIGKILL
// after KillTimeout. So nothing in the agent's session is left running on
// the host even when this side vanishes.
//
// Agents and terminal commands (Start) on a host with python3 run under a
// remote reaper, a short Python program (ssh_reaper.py, passed in the
// command line, nothing installed) that makes itself a child subreaper
// (prctl through ctypes), as the local reaper does (see the package doc):
// every orphan in the command's tree is re-parented to it, and when the
// command exits, is killed or the connection is lost it kills its children
// round after round until none is left. A terminal command's reaper does
// so on the wrapper's SIGTERM; an agent's passes SIGTERM on to the agent's
// own process group, so the stop sequence above stays polite, and ends the
// tree on the kill step (SIGHUP from the wrapper). So a daemon
// the command started and whose parent exited at once is ended too. Its
// cost is starting python3 once per command (about 20 to 40 ms of the
// host's CPU). Where Python cannot make a subreaper (a host that is not
// Linux) the command runs without it, and RunningCommand.Uncontained says
// so. An agent on a host without python3 (or not Linux) keeps the stated
// limit of the wrapper alone: a descendant that starts a session of its
// own there (setsid, a daemon) leaves the agent's session and survives it.
// For a terminal command on a host without python3 the wrapper falls back
// to recording such descendants, and Uncontained says so: where /proc is, it
// walks the parent links from the command every second (with ps -A, or by
// reading /proc in sh), and again when the command is killed, and ends
// those it recorded (stopped first, then killed, each only while /proc
// shows the start time it recorded; without pidfds in sh a pid reused in
// the instant between that check and the signal is the remaining hazard).
// What escapes between two samples (a double fork, or anything started
// just before the command exits on its own) is not found, and hosts without
// /proc record nothing; the exit status is reported regardless and the
// output is cut remoteExitDrain after it, so nothing waits on such a
// process. Arguments are single-quoted for the remote shell: nothing in
// them is interpreted.
type SSHTransport struct {
	// Client is the SSH connection; it is shared, not closed, by the transport.
	Client *ssh.Client
	// Dial, if set, is called instead of using Client, to get a (possibly
	// re-dialled) connection for each Connect.
	Dial func(ctx context.Context) (*ssh.Client, error)
	// Path is the agent program on the remote host: a path, or a name the
	// remote shell finds in its PATH.
	Path string
	// Args are the arguments after the program name.
	Args []string
	// Dir is the remote working directory (default: the login directory).
	Dir string
	// KeepEnv, when not nil, starts the remote command from an empty
	// environment holding only these variables of the remote login
	// environment (those set there), then Env; nil keeps the whole login
	// environment.
	KeepEnv []string
	// Env are NAME=value pairs set for the agent on top of the remote login
	// environment. Nothing of the local environment is passed. They travel
	// on the agent's stdin to the wrapper, which exports them, never on a
	// command line where the host's ps would show them. NAME is letters,
	// digits and underscores, not starting with a digit.
	Env []string
	// StderrBytes is how much of the agent's stderr is kept for error
	// messages (default 64 KiB).
	StderrBytes int
	// StopTimeout and KillTimeout are the remote grace periods after stdin
	// ends, in whole seconds (defaults 2s each).
	StopTimeout time.Duration
	KillTimeout time.Duration
	// Redactor masks secrets in quoted stderr; the values of secret-looking
	// Env entries are added.
	Redactor *Redactor
	// Logger, if set, receives each stderr line at debug level (redacted),
	// and a warning while a start is slow: how long it has waited and on
	// what (opening the session, or the remote login shell, whose startup
	// files run before the command), with what that shell last said.
	Logger *slog.Logger

	// noReaper runs Start's command without the remote reaper, as on a
	// host without python3 (for tests).
	noReaper  bool
	slowStart time.Duration // when a start phase is reported slow (tests)
}

// shellQuote quotes s as one word for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// remoteWrapper is the sh program that runs the agent (its "$@"). It must
// not contain single quotes: it is itself single-quoted.
//
// With setsid available the agent runs in a session of its own, together
// with a watcher that ends that session if the wrapper itself is killed
// (some servers kill a dropped session's process group).
// The agent reads its stdin through a FIFO fed by a separate reader job,
// so the wrapper learns when stdin ends (the reader signals it) while
// waiting on the agent alone. A background job's stdin would be /dev/null,
// hence the copy to fd 3. The reader repeats its USR1 every second while
// the wrapper lives (and is still its parent): a signal whose trap ran
// just before the wrapper's wait began would not end that wait, and the
// stop would wait for the agent to end by itself. Once stopping, and in
// tree, the wrapper ignores USR1, so a wait there ends only with the job
// it waits for; it never retries a wait on a status above 128, as dash
// reports a reaped job's status again on every wait, and a job that died
// by a signal would make such a loop spin for ever.
//
// With ACPHOST_ENV set, the wrapper first reads the agent's environment from
// stdin, one NAME=quoted-value line each, up to an empty line (see
// envPreamble); read takes a pipe one byte at a time, so nothing of what
// follows is consumed. Its own settings (ACPHOST_STOP, ACPHOST_KILL,
// ACPHOST_TERMINAL) are then taken into variables of its own and removed
// from the environment the agent gets.
//
// ACPHOST_TERMINAL selects the terminal mode of SSHTransport.Start: the
// command's stdin is /dev/null while the reader job still watches the
// session's stdin, the command's stderr joins its stdout (the wrapper's
// own stderr stays the session's, so a shell's "Killed" never lands in the
// output), a recorder job R (where /proc is) samples the command's
// descendants and, told by TERM, stops and kills them (see SSHTransport),
// and a command killed by a signal
// (a status above 128) makes the wrapper end with that signal itself, so
// the SSH exit status names it.
//
// Its first words, on the session's stderr, are wrapperUp: the login shell
// has done its startup (see startPhase).
const remoteWrapper = `trap "" PIPE HUP
echo ` + wrapperUp + ` >&2
if [ -n "$ACPHOST_ENV" ]; then nl="
"; while IFS= read -r l && [ -n "$l" ]; do eval "export $l"; done; unset ACPHOST_ENV nl l; fi
_ahs=$ACPHOST_STOP _ahk=$ACPHOST_KILL _aht=$ACPHOST_TERMINAL _ahp=$ACPHOST_REAPER; unset ACPHOST_STOP ACPHOST_KILL ACPHOST_TERMINAL ACPHOST_REAPER
_ahe=2; [ -n "$_aht" ] && _ahe=1
_ah4=- _ahw=$_ahk _ahy=; if [ -n "$_ahp" ]; then _ahy=/usr/bin/python3; [ -x $_ahy ] || _ahy=$(command -v python3 2>/dev/null); fi
if [ -n "$_ahy" ]; then set -- "$_ahy" -I -S -c "$_ahp" "${LC_CTYPE+1}" "${LC_CTYPE-}" "${_aht:+t}" "$@"; [ -n "$_aht" ] && _ah4=2 _ahw=1; else _ahp=; [ -n "$_aht" ] && echo "acphost: uncontained: no python3 on the host: descendants that leave the command session are recorded once a second where /proc is, and one orphaned between two records survives" >&2; fi
stop= _ahx=
trap "stop=1" USR1
W="( ( while kill -0 \$1 2>/dev/null; do sleep 1; done; kill -TERM 0; sleep $_ahw; kill -HUP 0; sleep 1; kill -KILL 0 ) & ) >/dev/null 2>&1 </dev/null 4>&-; shift; exec \"\$@\""
S=; command -v setsid >/dev/null 2>&1 && S="setsid sh -c"
_ahd=; _ahi=/dev/null
if [ -z "$_aht" ]; then _ahd=$(mktemp -d 2>/dev/null) || _ahd=/tmp/acphost-$$; mkdir -p "$_ahd" && mkfifo "$_ahd/in" || exit 126; _ahi="$_ahd/in"; fi
exec 3<&0
( z=; trap "kill \$c \$z 2>/dev/null; exit 0" TERM; cat <&3 >"$_ahi" & c=$!; wait $c; c=; while kill -USR1 $$; do sleep 1 & z=$!; wait $z; z=; read -r l </proc/self/stat 2>/dev/null && { set -- ${l##*\)}; [ "$2" = $$ ] || break; }; done ) >/dev/null 2>&1 &
r=$!
if [ -n "$S" ]; then $S "$W" acphost-watch $$ "$@" <"$_ahi" 3<&- 4>&$_ah4 2>&$_ahe & else "$@" <"$_ahi" 3<&- 4>&$_ah4 2>&$_ahe & fi
a=$!
exec 3<&-
sig() { kill -$1 -$a 2>/dev/null || kill -$1 $a 2>/dev/null; }
ps_() { read -r _l </proc/$1/stat || return 1; set -- ${_l##*\)}; _pp=$2 _s=${20}; }
L() { if [ -n "$P" ]; then ps -A -o pid= -o ppid=; else for f_ in /proc/[0-9]*/stat; do i=${f_#/proc/}; i=${i%/stat}; ps_ $i && echo $i $_pp; done; fi 2>/dev/null; }
scan() { n_=1; while [ $n_ = 1 ]; do n_=0; set -- $(L); while [ $# -ge 2 ]; do i=$1 q=$2; shift 2
  case $p in *" $i:"*) continue;; esac
  if [ "$q" = "$a" ]; then ps_ $a && [ "$_s" = "$rs" ] || continue
  else case $p in *" $q:"*) ;; *) continue;; esac; e_=${p#*" $q:"}; e_=${e_%% *}; ps_ $q && [ "$_s" = "$e_" ] || continue; fi
  ps_ $i && [ "$_pp" = "$q" ] || continue; p="$p$i:$_s "; n_=1; done; done; }
sg() { i=${2%:*}; ps_ $i && [ "$_s" = "${2#*:}" ] && kill -$1 $i; }
R() { f=; trap "f=1" TERM; p=" "; rs=; ps_ $a && rs=$_s; P=; ps -A -o pid= >/dev/null 2>&1 && P=1
  while [ -z "$f" ] && kill -0 $w; do scan; [ -n "$f" ] && break; sleep 1 & z=$!; wait $z; kill $z; done
  k=" "; n=0; while [ $n -lt 8 ]; do scan; m=; for e in $p; do case $k in *" $e "*) continue;; esac; sg STOP $e; k="$k$e "; m=1; done; [ -n "$m" ] || break; n=$((n+1)); done
  ps_ $a && [ "$_s" = "$rs" ] && sig KILL; for e in $k; do sg KILL $e; done; }
w=$$ d=; [ -n "$_aht" ] && [ -z "$_ahp" ] && [ -r /proc/$a/stat ] && { R >/dev/null 2>&1 </dev/null & d=$!; }
tree() { trap "" USR1; [ -n "$d" ] || return 0; kill -TERM $d 2>/dev/null; wait $d; d=; }
graced() { i=0; while kill -0 $a 2>/dev/null && [ $i -lt $1 ]; do sleep 1; i=$((i+1)); done; }
while :; do
  [ -n "$stop" ] || { wait $a; st=$?; }
  kill -0 $a 2>/dev/null || break
  [ -n "$stop" ] && { trap "" USR1; graced $_ahs; [ $_ahk -gt 0 ] && { sig TERM; graced $_ahk; }; [ -n "$_ahp" ] && { if [ -n "$_aht" ]; then sig TERM; wait $a; _ahx=137; elif kill -0 $a 2>/dev/null; then sig HUP; wait $a; st=$?; fi; }; tree; sig KILL; wait $a; st=$?; }
done
wait $a 2>/dev/null; x=$?; [ $x -ne 127 ] && st=$x
kill $r 2>/dev/null
[ -n "$_ahd" ] && rm -rf "$_ahd"
tree
sig KILL
[ -n "$_ahx" ] && st=$_ahx
[ -n "$_aht" ] && [ $st -gt 128 ] && { trap - PIPE HUP USR1; kill -$((st-128)) $$; }
exit $st`

// commandLine builds the remote command line; terminal selects the
// wrapper's terminal mode (see Start).
func (t *SSHTransport) commandLine(terminal bool) (string, error) {
	secs := func(d time.Duration) string {
		if d <= 0 {
			d = 2 * time.Second
		}
		return strconv.Itoa(int((d + time.Second - 1) / time.Second))
	}
	stop, kill := secs(t.StopTimeout), secs(t.KillTimeout)
	if terminal {
		stop, kill = "0", "0" // a terminal's end is immediate, as locally
	}
	var b strings.Builder
	if t.Dir != "" {
		b.WriteString("cd " + shellQuote(t.Dir) + " && ")
	}
	if t.KeepEnv != nil {
		// ${NAME+"NAME=$NAME"} is one word when NAME is set, none when not.
		b.WriteString("exec env -i")
		for _, name := range t.KeepEnv {
			if !isEnvName(name) {
				return "", fmt.Errorf("acpclient: ssh: KeepEnv entry %q is not a variable name", name)
			}
			b.WriteString(" ${" + name + `+"` + name + "=$" + name + `"}`)
		}
		b.WriteString(" ")
	}
	b.WriteString("ACPHOST_STOP=" + stop + " ACPHOST_KILL=" + kill)
	if terminal {
		b.WriteString(" ACPHOST_TERMINAL=1")
	}
	if !t.noReaper {
		b.WriteString(" ACPHOST_REAPER=" + shellQuote(remoteReaper))
	}
	if len(t.Env) > 0 {
		b.WriteString(" ACPHOST_ENV=1")
	}
	if t.KeepEnv == nil {
		b.WriteString(" exec")
	}
	b.WriteString(" sh -c " + shellQuote(remoteWrapper) + " acphost-agent")
	b.WriteString(" " + shellQuote(t.Path))
	for _, a := range t.Args {
		b.WriteString(" " + shellQuote(a))
	}
	return b.String(), nil
}

// envPreamble is what the wrapper reads first when env is set: one line per
// variable, NAME=value with the value single-quoted and its newlines spelt
// '"$nl"' (the line ends the entry), then an empty line. The name is checked
// strictly, since the wrapper evaluates the line.
func envPreamble(env []string) ([]byte, error) {
	if len(env) == 0 {
		return nil, nil
	}
	var b strings.Builder
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !isEnvName(name) {
			return nil, fmt.Errorf("acpclient: ssh: environment entry %q is not NAME=value", redactEntry(kv))
		}
		b.WriteString(name + "=" + strings.ReplaceAll(shellQuote(value), "\n", `'"$nl"'`) + "\n")
	}
	b.WriteString("\n")
	return []byte(b.String()), nil
}

// redactEntry keeps the name of a malformed entry out of caution about its
// value.
func redactEntry(kv string) string {
	if name, _, ok := strings.Cut(kv, "="); ok {
		return name + "=…"
	}
	return kv
}

func isEnvName(s string) bool {
	for i, r := range s {
		if r != '_' && !('a' <= r && r <= 'z') && !('A' <= r && r <= 'Z') && (i == 0 || !('0' <= r && r <= '9')) {
			return false
		}
	}
	return s != ""
}

// Connect starts the agent on the remote host. It returns once the remote
// login shell has run the agent's wrapper; a start that takes long is
// reported to Logger while it waits, and ends with ctx (see startPhase).
func (t *SSHTransport) Connect(ctx context.Context) (io.ReadWriteCloser, error) {
	r, err := t.startRemote(ctx)
	if err != nil {
		return nil, err
	}
	sess, stdin, stdout, stderr, client := r.sess, r.stdin, r.stdout, r.stderr, r.client
	red := t.redactor()
	p := &remoteProcess{sess: sess, stdin: stdin, stdout: stdout, path: t.Path, host: client.RemoteAddr().String(),
		stderr: newRing(t.StderrBytes), redactor: red, exited: make(chan struct{}), stderrDone: make(chan struct{}),
		closeWait: orDefault(t.StopTimeout, 2*time.Second) + orDefault(t.KillTimeout, 2*time.Second) + 5*time.Second}
	go func() {
		defer close(p.stderrDone)
		var w io.Writer = p.stderr
		if t.Logger != nil {
			w = io.MultiWriter(p.stderr, &lineLogger{logger: t.Logger, redactor: red})
		}
		for _, line := range r.loginSaid {
			_, _ = io.WriteString(w, line)
		}
		_, _ = io.Copy(w, stderr)
	}()
	go func() {
		p.exitErr = sess.Wait()
		close(p.exited)
	}()
	return p, nil
}

// remoteProcess is the stream to an agent started by SSHTransport.
type remoteProcess struct {
	sess       *ssh.Session
	stdin      io.WriteCloser
	stdout     io.Reader
	path, host string
	stderr     *ring
	redactor   *Redactor
	closeWait  time.Duration

	exited     chan struct{}
	stderrDone chan struct{}
	exitErr    error
	closeOnce  sync.Once
}

// Read reads the agent's stdout.
func (p *remoteProcess) Read(b []byte) (int, error) { return p.stdout.Read(b) }

// Write writes the agent's stdin.
func (p *remoteProcess) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Exited is closed when the remote command has ended or the connection
// carrying it is gone.
func (p *remoteProcess) Exited() <-chan struct{} { return p.exited }

// Stderr returns the kept end of the agent's stderr, secrets redacted.
func (p *remoteProcess) Stderr() string { return p.redactor.Redact(p.stderr.String()) }

// ExitError describes how the remote agent ended; nil while it runs.
func (p *remoteProcess) ExitError() *ExitError {
	if !settled(p.exited, p.stderrDone) {
		return nil
	}
	err := p.exitErr
	var exit *ssh.ExitError
	var missing *ssh.ExitMissingError
	switch {
	case errors.As(err, &exit) && exit.ExitStatus() == 127:
		err = fmt.Errorf("%w: %s on %s (exit status 127)", ErrAgentNotFound, p.path, p.host)
	case errors.As(err, &missing) || errors.Is(err, io.EOF):
		err = fmt.Errorf("connection to %s lost", p.host)
	}
	return &ExitError{Err: err, Stderr: tail(p.Stderr(), stderrTailBytes)}
}

// Close ends the agent: it closes the agent's stdin, which makes the remote
// wrapper stop it (see SSHTransport), and waits for the remote command to
// end; if the host does not answer in time the SSH session is closed.
func (p *remoteProcess) Close() error {
	p.closeOnce.Do(func() {
		stopRemote(p.exited, p.closeWait, p.stdin.Close, func() {
			select {
			case <-p.exited:
			default:
				_ = p.sess.Signal(ssh.SIGKILL)
			}
			p.sess.Close()
		})
		<-p.exited
		waitFor(p.stderrDone, time.Second)
	})
	return nil
}

// SSHClient returns the connection the transport runs its commands on (Dial's, or Client).
func (t *SSHTransport) SSHClient(ctx context.Context) (*ssh.Client, error) {
	if t.Dial != nil {
		client, err := t.Dial(ctx)
		if err != nil {
			return nil, fmt.Errorf("acpclient: ssh: %w", err)
		}
		return client, nil
	}
	if t.Client == nil {
		return nil, errors.New("acpclient: ssh: no client")
	}
	return t.Client, nil
}

// remoteStart is a remote command just started under the wrapper.
type remoteStart struct {
	client         *ssh.Client
	sess           *ssh.Session
	stdin          io.WriteCloser
	stdout, stderr io.Reader
	loginSaid      []string // the login shell's stderr lines before the wrapper's
}

// Phases of a remote start, as reported when slow.
const (
	phaseDial    = "the SSH connection (Dial)"
	phaseSession = "the SSH server to open a session and start the command"
	phaseLogin   = "the remote login shell to run its startup files and then the command"
)

// startRemote starts Path under the wrapper and passes it the environment;
// it returns once the wrapper runs.
func (t *SSHTransport) startRemote(ctx context.Context) (*remoteStart, error) {
	rc, err := t.prepareRemote(ctx, false, ErrAgentNotFound)
	if err != nil {
		return nil, err
	}
	client := rc.client
	host := client.RemoteAddr().String()
	r := &remoteStart{client: client}
	words := &loginWords{}
	err = t.startPhase(ctx, phaseSession, host, words, func() (func(), error) {
		sess, err := client.NewSession()
		if err != nil {
			return nil, fmt.Errorf("acpclient: ssh: opening a session on %s: %w", host, err)
		}
		undo := func() { sess.Close() }
		stdin, err1 := sess.StdinPipe()
		stdout, err2 := sess.StdoutPipe()
		stderr, err3 := sess.StderrPipe()
		if err := errors.Join(err1, err2, err3); err != nil {
			undo()
			return nil, fmt.Errorf("acpclient: ssh: %w", err)
		}
		if err := sess.Start(rc.line); err != nil {
			undo()
			return nil, fmt.Errorf("acpclient: ssh: starting %s on %s: %w", t.Path, host, err)
		}
		if _, err := stdin.Write(rc.preamble); err != nil {
			undo()
			return nil, fmt.Errorf("acpclient: ssh: passing the environment to %s on %s: %w", t.Path, host, err)
		}
		r.sess, r.stdin, r.stdout, r.stderr = sess, stdin, stdout, stderr
		return undo, nil
	})
	if err != nil {
		return nil, err
	}
	stderr := r.stderr
	err = t.startPhase(ctx, phaseLogin, host, words, func() (func(), error) {
		r.loginSaid, r.stderr = awaitWrapper(stderr, words)
		return nil, nil
	})
	if err != nil {
		r.sess.Close()
		return nil, err
	}
	return r, nil
}

// remoteCall is a checked remote command line, the environment preamble
// the wrapper reads first, and the connection to run it on.
type remoteCall struct {
	client   *ssh.Client
	line     string
	preamble []byte
}

// prepareRemote checks the transport's settings and gets the connection;
// a missing Path is an error wrapping notFound.
func (t *SSHTransport) prepareRemote(ctx context.Context, terminal bool, notFound error) (*remoteCall, error) {
	if t.Path == "" {
		return nil, fmt.Errorf("acpclient: %w: no program given", notFound)
	}
	preamble, err := envPreamble(t.Env)
	if err != nil {
		return nil, err
	}
	line, err := t.commandLine(terminal)
	if err != nil {
		return nil, err
	}
	var client *ssh.Client
	err = t.startPhase(ctx, phaseDial, "", &loginWords{}, func() (func(), error) {
		c, err := t.SSHClient(ctx)
		client = c
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	return &remoteCall{client: client, line: line, preamble: preamble}, nil
}
