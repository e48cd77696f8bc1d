package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/journal"
)

// keyEvent is what the journal tests read of an --events line.
type keyEvent struct {
	Key          string `json:"key"`
	Session      string `json:"session"`
	Seq          uint64 `json:"seq"`
	Turn         uint64 `json:"turn"`
	Kind         string `json:"kind"`
	Text         string `json:"text"`
	SessionReady *struct {
		Resumed bool `json:"resumed"`
	} `json:"sessionReady"`
}

func keyEvents(t *testing.T, stdout string) []keyEvent {
	t.Helper()
	var out []keyEvent
	for line := range strings.Lines(stdout) {
		var ev keyEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not a JSON event line: %q: %v", line, err)
		}
		out = append(out, ev)
	}
	return out
}

var resumeHintPattern = regexp.MustCompile(`continue it with --resume (\S+)\)`)

// A turn is journaled under a key that the resume hint prints whole;
// sessions lists it, history prints it (as text and as the same JSON lines
// --events printed), and --resume continues it: same key, Seq and turn
// numbers going on, the agent's session loaded.
func TestJournalSessionsHistoryResume(t *testing.T) {
	t.Parallel()
	home, cwd := t.TempDir(), t.TempDir()
	first := runAcprunIn(t, home, "--approve", "allow", "--cwd", cwd, "Write the note")
	if first.code != exitOK {
		t.Fatalf("first turn: exit %d; stderr:\n%s", first.code, first.stderr)
	}
	m := resumeHintPattern.FindStringSubmatch(first.stderr)
	if m == nil {
		t.Fatalf("no resume hint on stderr:\n%s", first.stderr)
	}
	key := m[1]

	list := runAcprunIn(t, home, "sessions")
	if list.code != exitOK || !strings.Contains(list.stdout, key+" ") {
		t.Fatalf("sessions (exit %d) does not list %s whole:\n%s%s", list.code, key, list.stdout, list.stderr)
	}

	hist := runAcprunIn(t, home, "history", key)
	if hist.code != exitOK {
		t.Fatalf("history: exit %d; stderr:\n%s", hist.code, hist.stderr)
	}
	for _, want := range []string{"> Write the note", "permission requested: Write acprun-demo.txt", "allowed", "Done: acprun-demo.txt is in your workspace."} {
		if !strings.Contains(hist.stdout, want) {
			t.Errorf("history lacks %q:\n%s", want, hist.stdout)
		}
	}

	histEvents := keyEvents(t, runAcprunIn(t, home, "history", key, "--events").stdout)
	if len(histEvents) == 0 {
		t.Fatal("history --events printed nothing")
	}
	var lastSeq uint64
	for i, ev := range histEvents {
		if ev.Key != key || ev.Seq != uint64(i+1) {
			t.Fatalf("history event %d: key %q seq %d; want %s, %d", i, ev.Key, ev.Seq, key, i+1)
		}
		lastSeq = ev.Seq
	}

	again := runAcprunIn(t, home, "--resume", key, "--events", "--approve", "reject", "--cwd", cwd, "Once more")
	if again.code != exitOK {
		t.Fatalf("resumed turn: exit %d; stderr:\n%s", again.code, again.stderr)
	}
	resumed := false
	for _, ev := range keyEvents(t, again.stdout) {
		if ev.Kind == "exited" {
			continue // agent-wide
		}
		if ev.Key != key {
			t.Fatalf("resumed run's event of key %q, want %s: %+v", ev.Key, key, ev)
		}
		if ev.Seq <= lastSeq {
			t.Fatalf("resumed run's seq %d does not continue after %d: %+v", ev.Seq, lastSeq, ev)
		}
		lastSeq = ev.Seq
		if ev.SessionReady != nil && ev.SessionReady.Resumed {
			resumed = true
		}
		if ev.Kind == "turn_start" && ev.Turn != 2 {
			t.Errorf("the resumed session's turn is numbered %d, want 2", ev.Turn)
		}
	}
	if !resumed {
		t.Errorf("the agent's session was not loaded on --resume %s:\n%s", key, again.stdout)
	}
	if h := runAcprunIn(t, home, "history", key).stdout; !strings.Contains(h, "> Write the note") || !strings.Contains(h, "> Once more") {
		t.Errorf("history after the resumed turn lacks a prompt:\n%s", h)
	}
}

// --journal chooses another file, also after the subcommand; an unknown
// session is a usage error that says where to look.
func TestJournalFlagAndUnknownSession(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	other := filepath.Join(t.TempDir(), "other.db")
	if r := runAcprunIn(t, home, "--journal", other, "--approve", "reject", "--cwd", t.TempDir(), "Hello"); r.code != exitOK {
		t.Fatalf("turn: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if r := runAcprunIn(t, home, "sessions"); r.code != exitOK || !strings.Contains(r.stdout, "no sessions yet") {
		t.Errorf("the default journal is not empty after a run with --journal (exit %d):\n%s", r.code, r.stdout)
	}
	r := runAcprunIn(t, home, "sessions", "--journal", other)
	if r.code != exitOK || strings.Count(r.stdout, "\n") != 2 {
		t.Errorf("sessions --journal %s (exit %d) does not list the one session:\n%s", other, r.code, r.stdout)
	}
	r = runAcprunIn(t, home, "history", "nosuchsession")
	if r.code != exitUsage || !strings.Contains(r.stderr, "acprun sessions") {
		t.Errorf("history of an unknown session: exit %d, stderr %q", r.code, r.stderr)
	}
}

// While another writer holds the journal, a turn refuses to start (it
// would lose its history) and says what to do; sessions and history still
// read it.
func TestJournalInUse(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	path := filepath.Join(t.TempDir(), "j.db")
	if r := runAcprunIn(t, home, "--journal", path, "--approve", "reject", "--cwd", t.TempDir(), "Hello"); r.code != exitOK {
		t.Fatalf("turn: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	held, err := journal.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	r := runAcprunIn(t, home, "--journal", path, "--approve", "reject", "--cwd", t.TempDir(), "Hello again")
	holder := fmt.Sprintf("(pid %d)", os.Getpid()) // this test holds it, not an acprun
	if r.code != exitFailed || !strings.Contains(r.stderr, "is in use by") || !strings.Contains(r.stderr, holder) ||
		strings.Contains(r.stderr, "acprun;") || !strings.Contains(r.stderr, "--journal FILE") {
		t.Errorf("a turn on a journal in use: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := runAcprunIn(t, home, "sessions", "--journal", path); r.code != exitOK || strings.Count(r.stdout, "\n") != 2 {
		t.Errorf("sessions beside a writer (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// Keys print as one shell word that reads back as the key: as they are
// when safe, quoted otherwise, and never with a raw control character.
func TestShellWord(t *testing.T) {
	for key, want := range map[string]string{
		"d6up5b4a7pjqkishjqrjwqmbnu": "d6up5b4a7pjqkishjqrjwqmbnu",
		"with space":                 "'with space'",
		"it's":                       `'it'\''s'`,
		" ":                          "' '",
		"":                           "''",
		"line\nbreak":                `$'line\nbreak'`,
		"nul\x00":                    `$'nul\x00'`,
		"día":                        "'día'",
	} {
		if got := shellWord(key); got != want {
			t.Errorf("shellWord(%q) = %s, want %s", key, got, want)
		}
	}
	if got := shellWord("it's\n"); got != `$'it\'s\n'` {
		t.Errorf("shellWord with a quote and a newline = %s", got)
	}
}

// The hint after a turn offers --resume only when the agent can load or
// resume a session; otherwise it says how to see the session instead.
func TestResumeHintOnlyWhenTheAgentCanResume(t *testing.T) {
	t.Parallel()
	fakeagent := acptest.BuildBinary(t)
	tests := []struct {
		name      string
		caps      string
		resumable bool
	}{
		{"loadSession", `{"loadSession":true}`, true},
		{"session/resume", `{"sessionCapabilities":{"resume":{}}}`, true},
		{"neither", `{"loadSession":false,"sessionCapabilities":{"list":{}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			script := acptest.WriteScript(t, acptest.Script{
				Initialize: acptest.InitializeScript{AgentCapabilities: json.RawMessage(tt.caps)},
				Prompts:    []acptest.Turn{{Steps: []acptest.Step{{Text: "hi"}}}},
			})
			r := runAcprun(t, "--agent", fmt.Sprintf("'%s' -script '%s'", fakeagent, script), "--cwd", t.TempDir(), "hello")
			if r.code != exitOK {
				t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
			}
			offered := strings.Contains(r.stderr, "--resume")
			if offered != tt.resumable || !tt.resumable && !strings.Contains(r.stderr, "acprun history ") {
				t.Errorf("resumable %v, stderr:\n%s", tt.resumable, r.stderr)
			}
		})
	}
}

// TestTurnJournalGroupsCommits: a turn writes its journal with a commit
// delay (a flood commits a few times a second, not per batch); history and
// sessions read it read-only, with nothing to commit.
func TestTurnJournalGroupsCommits(t *testing.T) {
	if o := journalOptions(false); o.ReadOnly || o.CommitDelay <= 0 || o.CommitDelay != journalCommitDelay {
		t.Errorf("a turn opens its journal with %+v, want a CommitDelay of %v", o, journalCommitDelay)
	}
	if o := journalOptions(true); !o.ReadOnly || o.CommitDelay != 0 {
		t.Errorf("a reader opens the journal with %+v, want read-only", o)
	}
}

// TestEventsLiveAndHistoryAgree: the lines --events printed live for a
// session are, byte for byte and in order, the lines history --events
// prints from the journal afterwards: nothing is lost between the two, not
// what waited for a delayed commit when acprun closed its journal.
func TestEventsLiveAndHistoryAgree(t *testing.T) {
	t.Parallel()
	home, cwd := t.TempDir(), t.TempDir()
	live := runAcprunIn(t, home, "--events", "--approve", "allow", "--cwd", cwd, "Write the note")
	if live.code != exitOK {
		t.Fatalf("turn: exit %d; stderr:\n%s", live.code, live.stderr)
	}
	var key string
	var liveLines []string
	for _, line := range strings.Split(strings.TrimSpace(live.stdout), "\n") {
		var ev keyEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if ev.Key == "" {
			continue // agent-wide: not in a session's history
		}
		if key == "" {
			key = ev.Key
		}
		liveLines = append(liveLines, line)
	}
	if key == "" {
		t.Fatalf("no session event in:\n%s", live.stdout)
	}
	hist := runAcprunIn(t, home, "history", key, "--events")
	if hist.code != exitOK {
		t.Fatalf("history: exit %d; stderr:\n%s", hist.code, hist.stderr)
	}
	if got, want := strings.TrimSpace(hist.stdout), strings.Join(liveLines, "\n"); got != want {
		t.Errorf("history --events:\n%s\nwant the live lines:\n%s", got, want)
	}
}

// --resume with an agent session id that several journaled sessions had
// (every demo agent numbers its first session alike) is refused, naming
// each matching key, instead of continuing the latest.
func TestResumeAmbiguousNativeID(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	path := filepath.Join(t.TempDir(), "j.db")
	var keys []string
	for range 2 {
		r := runAcprunIn(t, home, "--journal", path, "--approve", "reject", "--cwd", t.TempDir(), "Hello")
		m := resumeHintPattern.FindStringSubmatch(r.stderr)
		if r.code != exitOK || m == nil {
			t.Fatalf("turn: exit %d; stderr:\n%s", r.code, r.stderr)
		}
		keys = append(keys, m[1])
	}
	db, err := journal.Open(context.Background(), path, &journal.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := db.LoadSession(context.Background(), keys[0])
	db.Close()
	if err != nil || rec.NativeSessionID == "" {
		t.Fatalf("record of %s: %+v, %v", keys[0], rec, err)
	}
	r := runAcprunIn(t, home, "--journal", path, "--approve", "reject", "--resume", rec.NativeSessionID, "Again")
	if r.code != exitUsage || !strings.Contains(r.stderr, keys[0]) || !strings.Contains(r.stderr, keys[1]) {
		t.Errorf("--resume %s that two sessions had: exit %d, stderr %q; want a refusal naming %v",
			rec.NativeSessionID, r.code, r.stderr, keys)
	}
}

// runAcprunFrom runs acprun like runAcprunIn, from the directory dir.
func runAcprunFrom(t *testing.T, home, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(acprunBinary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("running acprun: %v", err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// --resume from another directory continues the session where it was
// recorded (the agent writes there); a --cwd elsewhere is refused naming
// both directories, and --move-cwd moves it.
func TestResumeKeepsItsDirectory(t *testing.T) {
	t.Parallel()
	home, recorded, other := t.TempDir(), t.TempDir(), t.TempDir()
	first := runAcprunIn(t, home, "--approve", "allow", "--cwd", recorded, "Write the note")
	m := resumeHintPattern.FindStringSubmatch(first.stderr)
	if first.code != exitOK || m == nil {
		t.Fatalf("first turn: exit %d; stderr:\n%s", first.code, first.stderr)
	}
	key := m[1]
	note := filepath.Join(recorded, "acprun-demo.txt")
	if err := os.Remove(note); err != nil {
		t.Fatalf("the first turn wrote no note: %v", err)
	}
	if r := runAcprunFrom(t, home, other, "--resume", key, "--approve", "allow", "Again"); r.code != exitOK {
		t.Fatalf("resume from another directory: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(note); err != nil {
		t.Errorf("the resumed session did not work in its recorded directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other, "acprun-demo.txt")); err == nil {
		t.Error("the resumed session wrote in the directory acprun was run from")
	}
	r := runAcprunIn(t, home, "--resume", key, "--approve", "allow", "--cwd", other, "Elsewhere")
	if r.code != exitUsage || !strings.Contains(r.stderr, recorded) || !strings.Contains(r.stderr, other) || !strings.Contains(r.stderr, "--move-cwd") {
		t.Errorf("--resume with another --cwd: exit %d, stderr %q; want a refusal naming %s and %s", r.code, r.stderr, recorded, other)
	}
	r = runAcprunIn(t, home, "--resume", key, "--approve", "allow", "--cwd", other, "--move-cwd", "Moved")
	if r.code != exitOK {
		t.Fatalf("--move-cwd: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(other, "acprun-demo.txt")); err != nil {
		t.Errorf("the moved session did not work in %s: %v", other, err)
	}
}

// --resume brings the session back in the agent mode the user chose
// (the agent itself reopens it in its default mode).
func TestResumeRestoresAgentMode(t *testing.T) {
	t.Parallel()
	home, cwd := t.TempDir(), t.TempDir()
	first := runAcprunIn(t, home, "--agent-mode", "careful", "--approve", "reject", "--cwd", cwd, "Hello")
	m := resumeHintPattern.FindStringSubmatch(first.stderr)
	if first.code != exitOK || m == nil {
		t.Fatalf("first turn: exit %d; stderr:\n%s", first.code, first.stderr)
	}
	again := runAcprunIn(t, home, "--resume", m[1], "--events", "--approve", "reject", "Again")
	if again.code != exitOK {
		t.Fatalf("resumed turn: exit %d; stderr:\n%s", again.code, again.stderr)
	}
	mode := ""
	for _, ev := range parseEvents(t, again.stdout) {
		if ev.Kind == "agent_mode" {
			mode = ev.AgentMode
		}
	}
	if mode != "careful" {
		t.Errorf("the resumed session's agent mode is %q, want the recorded careful:\n%s", mode, again.stdout)
	}
}
