package bridge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/sshdtest"
	"github.com/acphost/acphost/internal/sshtest"
	"github.com/acphost/acphost/internal/waitfor"
	"github.com/acphost/acphost/sshconn"
)

func TestParseWorkspace(t *testing.T) {
	tests := []struct {
		in   string
		want string
		err  bool
	}{
		{"/home/me/proj", "/home/me/proj", false},
		{"/home/me/../me/proj/", "/home/me/proj", false},
		{"ssh://dev@build.example:2222/srv/app", "ssh://dev@build.example:2222/srv/app", false},
		{"ssh://dev@build.example/srv/app", "ssh://dev@build.example:22/srv/app", false},
		{"relative/dir", "", true},
		{"ssh://dev@host", "", true},
		{"ssh:///srv", "", true},
		{"ssh://dev@host:99999/srv", "", true},
	}
	for _, tt := range tests {
		w, err := ParseWorkspace(tt.in)
		if (err != nil) != tt.err || (err == nil && w.String() != tt.want) {
			t.Errorf("ParseWorkspace(%q) = %q, %v", tt.in, w.String(), err)
		}
	}
}

// sshTarget returns the workspace destination of a test server.
func sshTarget(t *testing.T, addr, user string) *sshconn.Destination {
	d, err := sshconn.Parse(user + "@" + addr)
	if err != nil {
		t.Fatal(err)
	}
	return &d
}

// TestRemoteWorkspace launches the fake agent over SSH in a workspace, runs
// a turn with a permission request and a file write served over SFTP, cuts
// the connection mid-turn, and resumes on the next prompt.
func TestRemoteWorkspace(t *testing.T) {
	srv := sshtest.Start(t, nil)
	runRemoteWorkspace(t, srv.Addr, srv.User, sshconn.Config{KeyFiles: []string{srv.UserKeyFile},
		KnownHostsFiles: []string{srv.KnownHostsFile}, NoAgent: true}, func(*SSHHosts) { srv.DropConnections() })
}

// TestRemoteWorkspaceRealSSHD does the same through a real OpenSSH server.
func TestRemoteWorkspaceRealSSHD(t *testing.T) {
	srv := sshdtest.Start(t)
	runRemoteWorkspace(t, srv.Addr, srv.User, sshconn.Config{KeyFiles: []string{srv.KeyFile},
		KnownHostsFiles: []string{srv.KnownHostsFile}, NoAgent: true}, func(pool *SSHHosts) {
		// Cut the shared connection, as a network drop would.
		if c, err := pool.conn(*sshTarget(t, srv.Addr, srv.User)).Client(context.Background()); err == nil {
			c.Close()
		}
	})
}

func runRemoteWorkspace(t *testing.T, addr, user string, dial sshconn.Config, drop func(*SSHHosts)) {
	bin := acptest.BuildBinary(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644)
	marker := filepath.Join(t.TempDir(), "remote-agent-record")
	target := filepath.Join(dir, "out.txt")
	script := acptest.WriteScript(t, acptest.Script{
		StayAfterEOF: true,
		NewSession:   acptest.NewSessionScript{SessionIDs: []string{"sess_R"}},
		LoadSession:  acptest.LoadSessionScript{Sessions: []string{"sess_R"}},
		Prompts: []acptest.Turn{
			{Match: "write", Steps: []acptest.Step{
				update(`{"sessionUpdate":"tool_call","toolCallId":"w1","title":"Write out.txt","kind":"edit","status":"pending"}`),
				{Permission: &acptest.Permission{ToolCall: raw(`{"toolCallId":"w1"}`), OnSelect: map[string][]acptest.Step{
					"allow": {{ReadFile: &acptest.ReadFile{Path: filepath.Join(dir, "main.go")}}, {WriteFile: &acptest.WriteFile{Path: target, Content: "remote hello\n"}}},
				}}},
			}},
			{Match: "hang", IgnoreCancel: true, Steps: []acptest.Step{{Hang: true}}},
			{Steps: []acptest.Step{{Text: "back again"}}},
		},
	})
	pool := NewSSHHosts(dial)
	defer pool.Close()
	ws := Workspace{Path: dir, SSH: sshTarget(t, addr, user)}
	tr, err := pool.Transport(ws, []string{bin, "-script", script, "-record", marker}, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := pool.Files(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	defer files.Close()

	h, rec := newHostAndRecorder(t, nil)
	rec.setPermissionAnswer(func(p *PermissionRequest) { p.Allow() })
	b, err := h.Start(context.Background(), Config{ID: "remote", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: dir, Files: files, Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("write it")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("read", func(ev Event) bool {
		return strings.HasPrefix(ev.Text, "read ") && strings.Contains(ev.Text, "package main")
	})
	rec.waitFor("write ok", func(ev Event) bool { return ev.Text == "write "+target+": ok" })
	if got, _ := os.ReadFile(target); string(got) != "remote hello\n" {
		t.Fatalf("remote file = %q", got)
	}

	// The connection drops mid-turn.
	errc := make(chan error, 1)
	go func() { _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("hang")); errc <- err }()
	rec.waitFor("hang turn", func(ev Event) bool { return ev.Kind == KindTurnStart && ev.Text == "hang" })
	time.Sleep(50 * time.Millisecond)
	drop(pool)
	if err := waitfor.Recv(t, errc, "the call to return its error"); err == nil {
		t.Fatal("turn survived a dropped connection")
	}
	exited := rec.waitFor("exited", func(ev Event) bool { return ev.Kind == KindExited })
	if exited.Err == nil || !strings.Contains(exited.Err.Error(), "lost") {
		t.Errorf("exited cause %v, want the lost connection", exited.Err)
	}
	var exitErr *acpclient.ExitError
	if !errors.As(exited.Err, &exitErr) {
		t.Errorf("exited error %T is not an ExitError", exited.Err)
	}
	waitGone(t, marker)

	// The next prompt re-dials, relaunches and resumes the same session.
	stop, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("again"))
	if err != nil || stop != acpclient.StopEndTurn {
		t.Fatalf("prompt after reconnect: %q %v", stop, err)
	}
	ready := rec.waitFor("resumed", func(ev Event) bool { return ev.Kind == KindSession && ev.SessionReady.Resumed })
	if ready.Session != "sess_R" {
		t.Errorf("resumed %q", ready.Session)
	}
	rec.waitFor("back", func(ev Event) bool { return ev.Text == "back again" })
	b.Close()
	waitGone(t, marker)
}

// waitGone waits until no process has arg on its command line.
func waitGone(t *testing.T, arg string) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; {
		found := false
		dirs, _ := filepath.Glob("/proc/[0-9]*")
		for _, d := range dirs {
			cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
			stat, _ := os.ReadFile(filepath.Join(d, "stat"))
			if err == nil && strings.Contains(string(cmdline), arg) && !strings.Contains(string(stat), ") Z ") {
				found = true
			}
		}
		if !found {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a remote agent process (%s) is still running", arg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
