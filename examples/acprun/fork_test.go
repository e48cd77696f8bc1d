package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
)

// forkAgent returns an --agent command running the fake agent as a
// process: it advertises session/fork when fork is set, hands out ids,
// loads the ids in loadable, and answers each prompt "NAME" with "reply
// NAME".
func forkAgent(t *testing.T, fork bool, ids, loadable []string, prompts ...string) string {
	t.Helper()
	caps := `{"loadSession":true,"sessionCapabilities":{"list":{},"resume":{},"close":{}}}`
	if fork {
		caps = `{"loadSession":true,"sessionCapabilities":{"list":{},"resume":{},"close":{},"fork":{}}}`
	}
	script := acptest.Script{
		Initialize:  acptest.InitializeScript{AgentCapabilities: json.RawMessage(caps)},
		NewSession:  acptest.NewSessionScript{SessionIDs: ids},
		LoadSession: acptest.LoadSessionScript{Sessions: loadable},
	}
	for _, p := range prompts {
		script.Prompts = append(script.Prompts, acptest.Turn{Match: p, Steps: []acptest.Step{{Text: "reply " + p}}})
	}
	return fmt.Sprintf("'%s' -script '%s'", acptest.BuildBinary(t), acptest.WriteScript(t, script))
}

// "acprun fork SESSION" prints the new session's key; "acprun history" of
// it shows the session's history up to the fork (not what the session did
// after), where it forked, then the fork's own turns, which --resume
// continues, numbered on from the parent's.
func TestForkCommand(t *testing.T) {
	t.Parallel()
	home, cwd := t.TempDir(), t.TempDir()
	first := runAcprunIn(t, home, "--agent", forkAgent(t, true, []string{"parent-1"}, nil, "one"), "--cwd", cwd, "one")
	m := resumeHintPattern.FindStringSubmatch(first.stderr)
	if first.code != exitOK || m == nil {
		t.Fatalf("first turn: exit %d; stderr:\n%s", first.code, first.stderr)
	}
	parent := m[1]

	forked := runAcprunIn(t, home, "fork", "--agent", forkAgent(t, true, []string{"fork-1"}, []string{"parent-1"}), parent)
	if forked.code != exitOK {
		t.Fatalf("fork: exit %d; stderr:\n%s", forked.code, forked.stderr)
	}
	child := strings.TrimSpace(forked.stdout)
	if child == "" || strings.ContainsAny(child, " \n") || child == parent {
		t.Fatalf("fork printed %q, want the new session's key alone", forked.stdout)
	}

	if list := runAcprunIn(t, home, "sessions").stdout; !strings.Contains(list, "(fork of "+parent+" after turn 1)") {
		t.Errorf("sessions does not show the fork's parent:\n%s", list)
	}

	// The parent goes on alone; the fork continues from its own native session.
	if r := runAcprunIn(t, home, "--agent", forkAgent(t, true, nil, []string{"parent-1"}, "two"), "--resume", parent, "two"); r.code != exitOK {
		t.Fatalf("parent's second turn: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	again := runAcprunIn(t, home, "--agent", forkAgent(t, true, nil, []string{"fork-1"}, "three"), "--resume", child, "--events", "three")
	if again.code != exitOK {
		t.Fatalf("the fork's turn: exit %d; stderr:\n%s", again.code, again.stderr)
	}
	for _, ev := range keyEvents(t, again.stdout) {
		if ev.Kind == "turn_start" && ev.Turn != 2 {
			t.Errorf("the fork's first turn is numbered %d, want 2", ev.Turn)
		}
		if ev.Kind == "session" && ev.Session != "fork-1" {
			t.Errorf("the fork resumed on %q, want its own fork-1", ev.Session)
		}
	}

	hist := runAcprunIn(t, home, "history", child)
	if hist.code != exitOK {
		t.Fatalf("history of the fork: exit %d; stderr:\n%s", hist.code, hist.stderr)
	}
	want := []string{"> one", "reply one", "forked from session " + parent + " after turn 1", "> three", "reply three"}
	at := 0
	for _, w := range want {
		i := strings.Index(hist.stdout[at:], w)
		if i < 0 {
			t.Fatalf("history of the fork lacks %q after position %d (want %q in order):\n%s", w, at, want, hist.stdout)
		}
		at += i + len(w)
	}
	if strings.Contains(hist.stdout, "reply two") || strings.Contains(hist.stdout, "> two") {
		t.Errorf("history of the fork shows the parent's turn after the fork:\n%s", hist.stdout)
	}
	var keys []string
	for _, ev := range keyEvents(t, runAcprunIn(t, home, "history", "--events", child).stdout) {
		if len(keys) == 0 || keys[len(keys)-1] != ev.Key {
			keys = append(keys, ev.Key)
		}
	}
	if len(keys) != 2 || keys[0] != parent || keys[1] != child {
		t.Errorf("history --events of the fork runs through keys %q, want the parent's then the fork's", keys)
	}
}

// An agent without session/fork cannot fork, and --turn before the end of
// the session needs an agent that forks at an earlier point: both are
// refused, saying why, and print no key.
func TestForkCommandRefusals(t *testing.T) {
	t.Parallel()
	home, cwd := t.TempDir(), t.TempDir()
	journal := filepath.Join(home, "j.db")
	first := runAcprunIn(t, home, "--journal", journal, "--agent", forkAgent(t, true, []string{"p-1"}, nil, "one"), "--cwd", cwd, "one")
	m := resumeHintPattern.FindStringSubmatch(first.stderr)
	if first.code != exitOK || m == nil {
		t.Fatalf("first turn: exit %d; stderr:\n%s", first.code, first.stderr)
	}
	for _, c := range []struct {
		name string
		args []string
		says string
	}{
		{"no session/fork", []string{"fork", "--journal", journal, "--agent", forkAgent(t, false, nil, []string{"p-1"}), m[1]}, "does not advertise session/fork"},
		{"rewind", []string{"fork", "--journal", journal, "--agent", forkAgent(t, true, nil, []string{"p-1"}), "--turn", "1", m[1]}, "earlier point"},
		{"unknown session", []string{"fork", "--journal", journal, "--agent", forkAgent(t, true, nil, nil), "nope"}, "no session"},
	} {
		r := runAcprunIn(t, home, c.args...)
		if r.code == exitOK || r.stdout != "" || !strings.Contains(r.stderr, c.says) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want a failure saying %q", c.name, r.code, r.stdout, r.stderr, c.says)
		}
	}
}

// --transcript makes a transcript fork where the agent cannot fork: its
// key is printed, and the first prompt sent in it carries the transcript of
// the earlier turns ahead of the message, which history shows.
func TestForkCommandTranscript(t *testing.T) {
	t.Parallel()
	home, cwd := t.TempDir(), t.TempDir()
	first := runAcprunIn(t, home, "--agent", forkAgent(t, false, []string{"p-1"}, nil, "one"), "--cwd", cwd, "one")
	m := resumeHintPattern.FindStringSubmatch(first.stderr)
	if first.code != exitOK || m == nil {
		t.Fatalf("first turn: exit %d; stderr:\n%s", first.code, first.stderr)
	}
	forked := runAcprunIn(t, home, "fork", "--transcript", "--agent", forkAgent(t, false, []string{"t-1"}, []string{"p-1"}), m[1])
	child := strings.TrimSpace(forked.stdout)
	if forked.code != exitOK || child == "" || !strings.Contains(forked.stderr, "transcript fork") {
		t.Fatalf("fork --transcript: exit %d, stdout %q; stderr:\n%s", forked.code, forked.stdout, forked.stderr)
	}
	record := filepath.Join(t.TempDir(), "record.jsonl")
	agent := forkAgent(t, false, nil, []string{"t-1"}, "edited", "one") + fmt.Sprintf(" -record '%s'", record)
	if r := runAcprunIn(t, home, "--agent", agent, "--resume", child, "edited"); r.code != exitOK {
		t.Fatalf("the transcript fork's turn: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	msgs, err := acptest.ReadRecord(record)
	if err != nil {
		t.Fatal(err)
	}
	var prompt string
	for _, msg := range msgs {
		if msg.Method == "session/prompt" {
			prompt = string(msg.Params)
		}
	}
	if !strings.Contains(prompt, "Transcript of an earlier conversation") || !strings.Contains(prompt, "reply one") || !strings.Contains(prompt, `"edited"`) {
		t.Errorf("the transcript fork's first prompt %s lacks the transcript or the message", prompt)
	}
	if h := runAcprunIn(t, home, "history", child).stdout; !strings.Contains(h, "> [Transcript of an earlier conversation") || !strings.Contains(h, "reply edited") {
		t.Errorf("history of the transcript fork does not show the transcript and the reply:\n%s", h)
	}
}
