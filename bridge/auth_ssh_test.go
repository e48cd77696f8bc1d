package bridge

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/fakebin"
	"github.com/acphost/acphost/internal/sshtest"
	"github.com/acphost/acphost/sshconn"
)

// TestSignInWithEnvVarOverSSH is the env_var sign-in of an agent launched
// on an SSH host: the bridge restarts it remotely with the key, which
// reaches the agent but no command line on the host.
func TestSignInWithEnvVarOverSSH(t *testing.T) {
	const key = "sk-test-REMOTEsecret-5151"
	srv := sshtest.Start(t, nil)
	hosts := NewSSHHosts(sshconn.Config{KeyFiles: []string{srv.UserKeyFile}, KnownHostsFiles: []string{srv.KnownHostsFile}, NoAgent: true})
	defer hosts.Close()
	methods := raw(`[{"type":"env_var","id":"openai-api-key","name":"OpenAI API key","vars":[{"name":"OPENAI_API_KEY","secret":true}]}]`)
	base := acptest.Script{
		Initialize: acptest.InitializeScript{AuthMethods: methods},
		NewSession: acptest.NewSessionScript{RequireAuth: "openai-api-key"},
	}
	noKey := base
	noKey.Methods = map[string]acptest.Reply{"authenticate": {Error: &acptest.Error{Code: -32000, Message: "OPENAI_API_KEY is not set"}}}
	pre := fmt.Sprintf("[ \"$OPENAI_API_KEY\" = %q ] && exec %q -script %q -record \"$RECORD\"", key, acptest.BuildBinary(t), acptest.WriteScript(t, base))
	in := fakebin.Install(t, t.TempDir(), "agent", noKey, pre)

	h, rec := newHostAndRecorder(t, nil)
	answerAuth(rec, func(r *AuthRequest) {
		r.Answer(AuthAnswer{MethodID: "openai-api-key", Env: map[string]string{"OPENAI_API_KEY": key}})
	})
	b, err := h.StartProfile(ctxT(t), &Profile{Name: "plain", Binaries: []string{"agent"}}, LaunchOptions{
		SSH: &SSHLaunch{Hosts: hosts, Target: *sshTarget(t, srv.Addr, srv.User)}, Binary: in.Path,
	}, Config{ID: "remote-auth"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"}); err != nil {
		t.Fatalf("OpenSession after signing in over SSH: %v", err)
	}
	if n := len(in.Launches(t)); n != 2 {
		t.Errorf("%d launches: want the original and one restart with the key", n)
	}
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, []byte(key)) {
			t.Fatalf("the key is on a command line: %s: %q", p, data)
		}
	}
}
