package acpclient

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// wrapperUp is the line the remote wrapper writes first on the session's
// stderr: the login shell has read its startup files and run the wrapper.
// It must not contain single quotes (see remoteWrapper).
const wrapperUp = "acphost-wrapper-up"

// defaultSlowStart is how long a phase of a remote start may take before
// it is reported as slow; each later report comes after twice the wait.
const defaultSlowStart = 5 * time.Second

// loginWords keeps the last line the login shell wrote on stderr before
// the wrapper ran, for the report of a slow start.
type loginWords struct {
	mu   sync.Mutex
	last string
}

func (w *loginWords) add(line string) {
	if line = strings.TrimSpace(line); line != "" {
		w.mu.Lock()
		w.last = line
		w.mu.Unlock()
	}
}

func (w *loginWords) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// awaitWrapper reads the session's stderr up to the wrapper's first line.
// The lines before it, the login shell's own (a startup file's
// complaints), are kept in words and returned; the reader returned reads
// what follows. A stderr that ends first (the shell failed before running
// the wrapper, such as a cd to a missing directory) ends the wait too: how
// the command ended then says what went wrong.
func awaitWrapper(stderr io.Reader, words *loginWords) (before []string, rest io.Reader) {
	br := bufio.NewReader(stderr)
	for {
		line, err := br.ReadString('\n')
		if strings.TrimSuffix(line, "\n") == wrapperUp {
			return before, br
		}
		if line != "" {
			before = append(before, line)
			words.add(line)
		}
		if err != nil {
			return before, br
		}
	}
}

// startPhase runs step, one phase of a remote start, while reporting it as
// slow to the transport's Logger: how long it has waited so far, on what,
// and what the login shell last said. When ctx ends first it gives up with
// an error naming the phase and the wait that wraps ctx's error; undo, if
// step returns one, then releases what step got when it finishes late.
func (t *SSHTransport) startPhase(ctx context.Context, phase, host string, words *loginWords, step func() (undo func(), err error)) error {
	type result struct {
		undo func()
		err  error
	}
	var (
		mu        sync.Mutex
		abandoned bool
		done      = make(chan result, 1)
	)
	go func() {
		undo, err := step()
		mu.Lock()
		defer mu.Unlock()
		if abandoned {
			if undo != nil {
				undo()
			}
			return
		}
		done <- result{undo, err}
	}()
	start := time.Now()
	next := orDefault(t.slowStart, defaultSlowStart)
	timer := time.NewTimer(next)
	defer timer.Stop()
	said := func() string {
		if s := words.String(); s != "" {
			return "; the login shell last said: " + t.redactor().Redact(s)
		}
		return ""
	}
	for {
		select {
		case r := <-done:
			return r.err
		case <-timer.C:
			if t.Logger != nil {
				t.Logger.Warn("acpclient: ssh: remote start is slow", "host", host, "program", t.Path,
					"waiting_on", phase, "waited", time.Since(start).Round(time.Millisecond).String(), "login_said", t.redactor().Redact(words.String()))
			}
			next *= 2
			timer.Reset(next)
		case <-ctx.Done():
			mu.Lock()
			abandoned = true
			mu.Unlock()
			select {
			case r := <-done: // finished as ctx ended
				if r.undo != nil {
					r.undo()
				}
			default:
			}
			on := ""
			if host != "" {
				on = " on " + host
			}
			return fmt.Errorf("acpclient: ssh: starting %s%s: gave up after %v waiting on %s%s: %w",
				t.Path, on, time.Since(start).Round(time.Millisecond), phase, said(), context.Cause(ctx))
		}
	}
}

// redactor masks the values of secret-looking Env entries and Redactor's.
func (t *SSHTransport) redactor() *Redactor {
	red := &Redactor{Values: secretEnvValues(t.Env)}
	if t.Redactor != nil {
		red.Values = append(red.Values, t.Redactor.Values...)
	}
	return red
}
