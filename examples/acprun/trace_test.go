package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/sshtest"
)

// -v prints the wire trace on stderr, every JSON-RPC line out (->) and in
// (<-), for the demo agent, a local process and one over SSH; stdout keeps
// only the turn.
func TestVerboseShowsTheWireTrace(t *testing.T) {
	t.Parallel()
	script := acptest.WriteScript(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{{Text: "traced reply"}}}}})
	agent := fmt.Sprintf("'%s' -script '%s'", acptest.BuildBinary(t), script)
	server := sshtest.Start(t, nil)
	dir := t.TempDir()
	tests := []struct {
		name  string
		args  []string
		reply string
	}{
		{"demo", []string{"--cwd", t.TempDir()}, "I'm the demo agent."},
		{"process", []string{"--agent", agent, "--cwd", t.TempDir()}, "traced reply"},
		{"ssh", []string{"--agent", agent, "--cwd", dir, "--ssh", server.User + "@" + server.Addr,
			"--ssh-key", server.UserKeyFile, "--ssh-known-hosts", server.KnownHostsFile}, "traced reply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runAcprun(t, append(tt.args, "-v", "hi")...)
			if r.code != exitOK {
				t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
			}
			for _, want := range []string{`-> {"jsonrpc":"2.0","id":1,"method":"initialize"`, `<- {"jsonrpc":"2.0","id":1,"result":`,
				`"method":"session/prompt"`, `<- {"jsonrpc":"2.0","method":"session/update"`} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
			if !strings.Contains(r.stdout, tt.reply) || strings.Contains(r.stdout, "jsonrpc") {
				t.Errorf("stdout is not the turn alone:\n%s", r.stdout)
			}
		})
	}
}
