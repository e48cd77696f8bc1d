package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/acptest"
)

// installed is a fake agent program installed for a profile test: a small
// executable under the profile's binary name that records its arguments
// and runs the fake agent with a script, recording what it receives.
type installed struct {
	Path   string // the program
	args   string // file: one line per argument, "--" after each start
	record string // file: the messages the latest process received
}

// install writes the program name into dir. pre is shell code run before
// the fake agent starts (for example to exit on a flag, or to exec the fake
// agent with another script, passing -record "$RECORD").
func install(t *testing.T, dir, name string, script acptest.Script, pre string) *installed {
	t.Helper()
	bin := acptest.BuildBinary(t)
	scriptPath := acptest.WriteScript(t, script)
	tmp := t.TempDir()
	in := &installed{Path: filepath.Join(dir, name), args: filepath.Join(tmp, "args"), record: filepath.Join(tmp, "record")}
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

// launches returns the argument lists of every start so far.
func (in *installed) launches(t *testing.T) [][]string {
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

// received returns the messages the latest process received.
func (in *installed) received(t *testing.T) []acptest.Message {
	t.Helper()
	msgs, err := acptest.ReadRecord(in.record)
	if err != nil {
		t.Fatalf("reading the agent's record: %v", err)
	}
	return msgs
}

// methods lists the methods of requests and notifications received.
func methodsOf(msgs []acptest.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Method != "" {
			out = append(out, m.Method)
		}
	}
	return out
}

// paramsOf returns the params of the first message of method.
func paramsOf(t *testing.T, msgs []acptest.Message, method string) map[string]any {
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
	t.Fatalf("no %s received; got %v", method, methodsOf(msgs))
	return nil
}

// eventually polls cond for up to five seconds.
func eventually(t *testing.T, desc string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", desc)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
