// Package fakebin installs the acptest fake agent under a real agent's
// program name, for tests of what finds and launches agents (profiles,
// resolvers, the doctor): the program records the arguments of every start
// and the messages the latest process received. It is a POSIX shell
// wrapper, so it serves this repository's tests rather than apps; apps that
// test process handling run acptest.BuildBinary's binary directly.
package fakebin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
)

// Installed is a fake agent program installed for a test of what launches
// agents (a profile, a resolver): a small executable under the agent's
// binary name that records its arguments and runs the fake agent with a
// script, recording what it receives.
type Installed struct {
	Path   string // the program
	args   string // file: one line per argument, "--" after each start
	record string // file: the messages the latest process received
}

// Install writes the program name into dir. pre is shell code run before
// the fake agent starts (for example to exit on a flag, or to exec the fake
// agent with another script, passing -record "$RECORD").
func Install(t *testing.T, dir, name string, script acptest.Script, pre string) *Installed {
	t.Helper()
	bin := acptest.BuildBinary(t)
	scriptPath := acptest.WriteScript(t, script)
	tmp := t.TempDir()
	in := &Installed{Path: filepath.Join(dir, name), args: filepath.Join(tmp, "args"), record: filepath.Join(tmp, "record")}
	body := fmt.Sprintf("#!/bin/sh\nRECORD=%q\nfor a in \"$@\"; do printf '%%s\\n' \"$a\" >> %q; done\necho -- >> %q\n%s\nexec %q -script %q -record %q\n",
		in.record, in.args, in.args, pre, bin, scriptPath, in.record)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in.Path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return in
}

// Launches returns the argument lists of every start so far.
func (in *Installed) Launches(t *testing.T) [][]string {
	t.Helper()
	data, err := os.ReadFile(in.args)
	if err != nil {
		return nil
	}
	var out [][]string
	cur := []string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "--" {
			out = append(out, cur)
			cur = []string{}
			continue
		}
		cur = append(cur, line)
	}
	return out
}

// Received returns the messages the latest process received.
func (in *Installed) Received(t *testing.T) []acptest.Message {
	t.Helper()
	msgs, err := acptest.ReadRecord(in.record)
	if err != nil {
		t.Fatalf("reading the agent's record: %v", err)
	}
	return msgs
}

// MethodsOf lists the methods of requests and notifications received.
func MethodsOf(msgs []acptest.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Method != "" {
			out = append(out, m.Method)
		}
	}
	return out
}

// ParamsOf returns the params of the first message of method.
func ParamsOf(t *testing.T, msgs []acptest.Message, method string) map[string]any {
	t.Helper()
	for _, m := range msgs {
		if m.Method == method {
			var p map[string]any
			if err := json.Unmarshal(m.Params, &p); err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	t.Fatalf("no %s received; got %v", method, MethodsOf(msgs))
	return nil
}

// SentParams returns the params of every message of method, as sent.
func SentParams(msgs []acptest.Message, method string) []string {
	var out []string
	for _, m := range msgs {
		if m.Method == method {
			out = append(out, string(m.Params))
		}
	}
	return out
}
