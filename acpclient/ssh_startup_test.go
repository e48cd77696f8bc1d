package acpclient

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/acphost/acphost/internal/sshdtest"
)

// startBounded runs start, failing the test if it does not return within
// a minute.
func startBounded(t *testing.T, what string, start func() (io.ReadCloser, error)) (io.ReadCloser, error) {
	t.Helper()
	type result struct {
		rc  io.ReadCloser
		err error
	}
	done := make(chan result, 1)
	go func() {
		rc, err := start()
		done <- result{rc, err}
	}()
	select {
	case r := <-done:
		return r.rc, r.err
	case <-time.After(time.Minute):
		t.Fatalf("%s did not return within a minute", what)
		return nil, nil
	}
}

// TestSSHSlowLoginIsReported: when the remote login shell is slow to
// start (its startup file waits), a start with a deadline gives up at the
// deadline with an error that names the wait (the login shell) and what
// that shell said; a start without one warns on the Logger while it waits,
// saying on what, and goes on once the login is done. As an agent
// (Connect) and as a terminal (Start).
func TestSSHSlowLoginIsReported(t *testing.T) {
	srv := sshdtest.Start(t)
	client := srv.Dial(t)
	for _, start := range []struct {
		name string
		run  func(context.Context, *SSHTransport) (io.ReadCloser, error)
	}{
		{"connect", func(ctx context.Context, tr *SSHTransport) (io.ReadCloser, error) { return tr.Connect(ctx) }},
		{"start", func(ctx context.Context, tr *SSHTransport) (io.ReadCloser, error) { return tr.Start(ctx) }},
	} {
		t.Run(start.name+"/deadline", func(t *testing.T) {
			srv.HoldLogins(t, "startup: waiting for the test's lock")
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			tr := &SSHTransport{Client: client, Path: "echo", Args: []string{"ran"}}
			rc, err := startBounded(t, start.name, func() (io.ReadCloser, error) { return start.run(ctx, tr) })
			if err == nil {
				rc.Close()
				t.Fatal("a start whose login never finished succeeded")
			}
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), phaseLogin) ||
				!strings.Contains(err.Error(), "waiting for the test's lock") {
				t.Errorf("error %q: want it to wrap the deadline, name the wait on %q and quote the login shell", err, phaseLogin)
			}
		})
		t.Run(start.name+"/warning", func(t *testing.T) {
			release := srv.HoldLogins(t, "startup: waiting for the test's lock")
			logs := &logRecords{}
			tr := &SSHTransport{Client: client, Path: "echo", Args: []string{"ran"}, Logger: slog.New(logs), slowStart: time.Millisecond}
			started := make(chan error, 1)
			var rc io.ReadCloser
			go func() {
				var err error
				rc, err = start.run(context.Background(), tr)
				started <- err
			}()
			waitRecord(t, logs, "remote start is slow", "waiting_on="+phaseLogin, "login_said=startup: waiting for the test's lock", "waited=")
			release()
			select {
			case err := <-started:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(time.Minute):
				t.Fatal("the start did not return within a minute of the login's release")
			}
			defer rc.Close()
			if start.name == "start" {
				if out := readAllBounded(t, rc.(*remoteCommand)); out != "ran\n" {
					t.Errorf("output %q after a slow login, want %q", out, "ran\n")
				}
			}
		})
	}
}

// waitRecord waits, for up to a minute, for a log record holding every
// one of parts.
func waitRecord(t *testing.T, logs *logRecords, parts ...string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		logs.mu.Lock()
		recs := append([]string(nil), logs.recs...)
		logs.mu.Unlock()
		for _, r := range recs {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(r, p)
			}
			if ok {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log record with %q within a minute in:\n%s", parts, strings.Join(recs, "\n"))
		}
	}
}

// TestSSHSlowDialIsReported: a Dial that does not return is reported as
// the wait, and the start gives up at ctx's deadline with an error naming
// it.
func TestSSHSlowDialIsReported(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	logs := &logRecords{}
	tr := &SSHTransport{Path: "agent", Logger: slog.New(logs), slowStart: time.Millisecond,
		Dial: func(context.Context) (*ssh.Client, error) { <-hold; return nil, errors.New("released") }}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := startBounded(t, "Connect", func() (io.ReadCloser, error) { return tr.Connect(ctx) })
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), phaseDial) {
		t.Errorf("error %v: want it to wrap the deadline and name the wait on %q", err, phaseDial)
	}
	waitRecord(t, logs, "remote start is slow", "waiting_on="+phaseDial)
}
