package kiro

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/bridgetest"
	"github.com/acphost/acphost/internal/fakebin"
	"github.com/acphost/acphost/internal/sshtest"
	"github.com/acphost/acphost/internal/waitfor"
	"github.com/acphost/acphost/sshconn"
)

// TestProfileOverSSH starts the kiro profile on an SSH host: the program is
// found by the remote shell, the workspace overlay is written over SFTP
// before the spawn, and the transcript check before a resume looks at the
// remote files, and so does the classification of its agent from the
// user's spec.
func TestProfileOverSSH(t *testing.T) {
	srv := sshtest.Start(t, nil)
	hosts := bridge.NewSSHHosts(sshconn.Config{KeyFiles: []string{srv.UserKeyFile}, KnownHostsFiles: []string{srv.KnownHostsFile}, NoAgent: true})
	defer hosts.Close()
	remoteHome := t.TempDir()
	workspace := t.TempDir()
	os.MkdirAll(filepath.Join(remoteHome, ".kiro", "sessions", "cli"), 0o755)
	os.WriteFile(TranscriptPath(remoteHome, "sess_kept"), []byte("{}"), 0o644)
	os.MkdirAll(filepath.Dir(agentSpecPath(remoteHome, "reviewer")), 0o755)
	os.WriteFile(agentSpecPath(remoteHome, "reviewer"), []byte(`{"name":"reviewer","allowedTools":["read"]}`), 0o644)
	agent := fakebin.Install(t, t.TempDir(), "kiro-cli", acptest.Script{
		NewSession: acptest.NewSessionScript{SessionIDs: []string{"sess_fresh"},
			Modes: bridgetest.Raw(`{"currentModeId":"reviewer","availableModes":[{"id":"kiro_default","name":"kiro_default"},{"id":"reviewer","name":"reviewer"}]}`)},
		LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_kept", "sess_gone"}},
	}, "")

	h, rec := bridgetest.NewHost(t, nil)
	b, err := h.StartProfile(context.Background(), Profile, bridge.LaunchOptions{
		SSH:    &bridge.SSHLaunch{Hosts: hosts, Target: *sshTarget(t, srv.Addr, srv.User)},
		Binary: agent.Path, Cwd: workspace, Home: remoteHome, AgentMode: "reviewer", Effort: "high", Model: "claude-sonnet-4",
	}, bridge.Config{ID: "kiro-remote"})
	if err != nil {
		t.Fatal(err)
	}
	if res := b.Launch().Resolution(); res.Source != bridge.FoundRemote {
		t.Errorf("resolution %+v", res)
	}
	if got := agent.Launches(t); len(got) != 1 || !slices.Equal(got[0], []string{"acp", "--agent", "reviewer"}) {
		t.Errorf("remote argv %q", got)
	}
	overlay, err := os.ReadFile(filepath.Join(workspace, ".kiro", "settings", "cli.json"))
	if err != nil || !strings.Contains(string(overlay), "high") {
		t.Errorf("overlay written over SFTP: %s, %v", overlay, err)
	}

	kept, err := b.OpenSession(waitfor.Context(t), bridge.SessionConfig{Cwd: workspace, ResumeID: "sess_kept"})
	if err != nil || kept.ID() != "sess_kept" {
		t.Fatalf("resume with a remote transcript: %v, %v", kept, err)
	}
	gone, err := b.OpenSession(waitfor.Context(t), bridge.SessionConfig{Cwd: workspace, ResumeID: "sess_gone"})
	if err != nil || gone.ID() != "sess_fresh" {
		t.Fatalf("resume without a remote transcript: %v, %v", gone, err)
	}
	if st := gone.Authority(); st.State != bridge.AuthorityProtected || st.AgentMode != "reviewer" {
		t.Errorf("Authority of an agent whose remote spec reads only: %+v", st)
	}
	ready := rec.WaitFor("fresh session", func(ev bridge.Event) bool { return ev.Kind == bridge.KindSession && ev.Session == "sess_fresh" })
	if ready.SessionReady.Resumed || !strings.Contains(ready.SessionReady.ResumeError, "transcript") {
		t.Errorf("ready %+v", ready.SessionReady)
	}
	b.Close()
}

// sshTarget returns the workspace target of a test server.
func sshTarget(t *testing.T, addr, user string) *sshconn.Destination {
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	return &sshconn.Destination{User: user, Host: host, Port: p}
}
