package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/fakebin"
)

// A fake codey on PATH: doctor shows the sign-in state from "codey models"
// and the models from initialize's _meta.modelState.
func TestDoctorCodeyModelsAndSignIn(t *testing.T) {
	t.Parallel()
	script := acptest.WriteScript(t, acptest.Script{Initialize: acptest.InitializeScript{
		Meta: json.RawMessage(`{"modelState":{"currentModelId":"codey-opus-5","availableModels":[{"modelId":"codey-opus-5","name":"Opus"},{"modelId":"codey-sonnet-5","name":"Sonnet"}]}}`),
	}})
	dir := t.TempDir()
	body := fmt.Sprintf(`#!/bin/sh
[ "$1" = --version ] && { echo "codey 1.4.0"; exit 0; }
[ "$1" = models ] && { printf 'You are logged in as api.anthropic.com.\n* codey-opus-5 (default)\n- codey-sonnet-5\n'; exit 0; }
exec '%s' -script '%s'
`, acptest.BuildBinary(t), script)
	if err := os.WriteFile(filepath.Join(dir, "codey"), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(acprunBinary, "doctor", "codey")
	cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "NO_COLOR=1"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("doctor: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) < 2 || !strings.Contains(lines[0], "SIGN-IN") || !strings.Contains(lines[0], "MODELS") {
		t.Fatalf("doctor output:\n%s", stdout.String())
	}
	row := lines[1]
	for _, want := range []string{"codey", "ok", "1.4.0", "signed in as api.anthropic.com", "2, current codey-opus-5"} {
		if !strings.Contains(row, want) {
			t.Errorf("row %q lacks %q", row, want)
		}
	}
}

// "acprun doctor --timeout 1s codey" with a "codey models" that ignores
// SIGTERM, leaves a child and hangs: the row reads "slow", not "missing",
// the ACP check still answers, the note names the timed-out probe, and the
// probe and its child are gone.
func TestDoctorHangingCodeyModels(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("checks the process table through /proc")
	}
	script := acptest.WriteScript(t, acptest.Script{})
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	body := fmt.Sprintf(`#!/bin/sh
[ "$1" = --version ] && { echo "codey 1.4.0"; exit 0; }
[ "$1" = models ] && { trap "" TERM; sleep 300 & echo $$ > '%[3]s.models'; echo $! > '%[3]s.child'; exec sleep 301; }
exec '%[1]s' -script '%[2]s'
`, acptest.BuildBinary(t), script, pids)
	if err := os.WriteFile(filepath.Join(dir, "codey"), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(acprunBinary, "doctor", "--timeout", "1s", "codey")
	cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "NO_COLOR=1"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("doctor: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 || !strings.Contains(lines[1], "slow") || !strings.Contains(lines[1], "yes") || strings.Contains(out, "missing") {
		t.Errorf("doctor output:\n%s", out)
	}
	if !strings.Contains(out, "codey models timed out") {
		t.Errorf("doctor output does not name the timed-out probe:\n%s", out)
	}
	fakebin.WaitGone(t, fakebin.PidFrom(t, pids+".models"), "codey models")
	fakebin.WaitGone(t, fakebin.PidFrom(t, pids+".child"), "the child of codey models")
}

// runDoctorWith runs "acprun doctor args…" with PATH path and a fresh HOME.
func runDoctorWith(t *testing.T, path string, args ...string) result {
	t.Helper()
	cmd := exec.Command(acprunBinary, append([]string{"doctor"}, args...)...)
	cmd.Env = []string{"PATH=" + path, "HOME=" + t.TempDir(), "NO_COLOR=1"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	code := 0
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// "doctor claude" without claude installed fails with status 3 and says
// so; "doctor" alone surveys and succeeds.
func TestDoctorMissingProviderFails(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	r := runDoctorWith(t, empty, "claude")
	if r.code != exitNotFound || lastLine(r.stderr) != "acprun: doctor: 1 of 1 providers not installed" || !strings.Contains(r.stdout, "missing") {
		t.Errorf("doctor claude: exit status %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// The note says how to give acprun the program, in acprun's terms.
	if !strings.Contains(r.stdout, "claude: install Claude Code (claude-agent-acp or claude-code-acp) on PATH or in ~/.local/bin") || !strings.Contains(r.stdout, "--agent '/its/path ARGS'") {
		t.Errorf("doctor claude: the note does not say how to give the program:\n%s", r.stdout)
	}
	if r := runDoctorWith(t, empty); r.code != exitOK {
		t.Errorf("doctor: exit status %d, stderr:\n%s", r.code, r.stderr)
	}
}

// "doctor -h" prints doctor's own usage and flags, not the turn's.
func TestDoctorHelp(t *testing.T) {
	t.Parallel()
	r := runDoctorWith(t, t.TempDir(), "-h")
	if r.code != exitOK || !strings.HasPrefix(r.stderr, "usage: acprun doctor ") || !strings.Contains(r.stderr, "-json") ||
		strings.Contains(r.stderr, "-approve") || strings.Contains(r.stderr, `"prompt"`) {
		t.Errorf("doctor -h: exit status %d, stderr:\n%s", r.code, r.stderr)
	}
}

// installCodey puts a fake codey in dir: signed in as account, its models
// listed, the fake agent behind it.
func installCodey(t *testing.T, dir, account string) {
	t.Helper()
	script := acptest.WriteScript(t, acptest.Script{Initialize: acptest.InitializeScript{
		Meta: json.RawMessage(`{"modelState":{"currentModelId":"codey-opus-5-with-a-very-long-model-name","availableModels":[{"modelId":"codey-opus-5-with-a-very-long-model-name","name":"Opus"}]}}`),
	}})
	body := fmt.Sprintf(`#!/bin/sh
[ "$1" = --version ] && { echo "codey 1.4.0"; exit 0; }
[ "$1" = models ] && { printf 'You are logged in as %s.\n* codey-opus-5 (default)\n'; exit 0; }
exec '%s' -script '%s'
`, account, acptest.BuildBinary(t), script)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "codey"), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// With long paths, accounts and model names the table still fits 100
// columns, and stderr says how each check went, one line per provider,
// while stdout holds only the table and its notes.
func TestDoctorTableFitsAndShowsProgress(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a-rather-long-directory-name", "where", "the", "agents", "are", "installed", "bin")
	installCodey(t, dir, "someone-with-a-long-name@a-long-domain.example.com")
	fakebin.Install(t, dir, "claude-agent-acp", acptest.Script{}, "")
	r := runDoctorWith(t, dir+":/usr/bin:/bin")
	if r.code != exitOK {
		t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
	}
	table, _, _ := strings.Cut(r.stdout, "\n\n")
	lines := strings.Split(table, "\n")
	if len(lines) != 1+len(profileNames()) {
		t.Fatalf("%d table lines, want a header and %d rows:\n%s", len(lines), len(profileNames()), r.stdout)
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 100 {
			t.Errorf("a line of %d columns:\n%s", n, l)
		}
	}
	for _, want := range []string{"codey      ok", "signed in as someone", "PATH", "claude "} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	// Where each program is, whole: a path cut to fit a column is no use.
	for _, want := range []string{"  claude: " + filepath.Join(dir, "claude-agent-acp") + "\n", "  codey: " + filepath.Join(dir, "codey") + "\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the output lacks %q:\n%s", want, r.stdout)
		}
	}
	progress := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(progress) != 1+len(profileNames()) || progress[0] != fmt.Sprintf("doctor: checking %d providers", len(profileNames())) {
		t.Fatalf("stderr is not one line per provider:\n%s", r.stderr)
	}
	for _, name := range profileNames() {
		if !slices.ContainsFunc(progress, func(l string) bool { return strings.HasPrefix(l, "doctor: "+name+": ") }) {
			t.Errorf("no progress line for %s:\n%s", name, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "doctor:") {
		t.Errorf("progress on stdout:\n%s", r.stdout)
	}
}

// --json prints an array that parses, an object per provider with the
// documented fields.
func TestDoctorJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	installCodey(t, dir, "me@example.com")
	r := runDoctorWith(t, dir+":/usr/bin:/bin", "--json", "codey", "kiro")
	if r.code != exitNotFound {
		t.Fatalf("exit status %d, want 3 (kiro is missing); stderr:\n%s", r.code, r.stderr)
	}
	var reports []struct {
		Provider string `json:"provider"`
		Status   string `json:"status"`
		Ready    bool   `json:"ready"`
		Binary   *struct {
			Path, Name, Source string
		} `json:"binary"`
		Version   string                 `json:"version"`
		ACP       bool                   `json:"acp"`
		AgentInfo *struct{ Name string } `json:"agentInfo"`
		SignIn    string                 `json:"signIn"`
		Account   string                 `json:"account"`
		Models    *struct {
			CurrentModelID string `json:"currentModelId"`
		} `json:"models"`
		Findings []struct{ Check, Status, Message string } `json:"findings"`
		Missing  []string                                  `json:"missing"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &reports); err != nil {
		t.Fatalf("stdout is not a JSON array: %v\n%s", err, r.stdout)
	}
	if len(reports) != 2 {
		t.Fatalf("%d reports:\n%s", len(reports), r.stdout)
	}
	codey, kiro := reports[0], reports[1]
	if codey.Provider != "codey" || codey.Status != "ok" || !codey.Ready || codey.Binary == nil || codey.Binary.Path != filepath.Join(dir, "codey") ||
		codey.Version != "1.4.0" || !codey.ACP || codey.AgentInfo == nil || codey.SignIn != "signed_in" || codey.Account != "me@example.com" ||
		codey.Models == nil || codey.Models.CurrentModelID == "" || len(codey.Findings) == 0 {
		t.Errorf("codey: %+v", codey)
	}
	if kiro.Provider != "kiro" || kiro.Status != "missing" || kiro.Ready || kiro.Binary != nil || len(kiro.Missing) == 0 {
		t.Errorf("kiro: %+v", kiro)
	}
}

// "doctor --provider NAME", repeated, checks those providers as the
// positional names do; a turn's flag or an unknown one is bad usage that
// points at doctor's own help.
func TestDoctorOwnFlags(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	names := profileNames()[:2]
	r := runDoctorWith(t, empty, "--provider", names[0], "--provider="+names[1])
	if r.code != exitNotFound || lastLine(r.stderr) != "acprun: doctor: 2 of 2 providers not installed" {
		t.Errorf("doctor --provider %s --provider %s: exit status %d, stderr:\n%s", names[0], names[1], r.code, r.stderr)
	}
	for _, args := range [][]string{{"--agent", "x"}, {"--cwd", empty}, {"--mode", "full"}, {"--bogus"}} {
		r := runDoctorWith(t, empty, args...)
		if r.code != exitUsage || !strings.HasSuffix(lastLine(r.stderr), "(see acprun doctor -h)") ||
			!strings.Contains(r.stderr, "usage: acprun doctor ") || strings.Contains(r.stderr, "checking") {
			t.Errorf("doctor %v: exit status %d, stderr:\n%s", args, r.code, r.stderr)
		}
	}
	cmd := exec.Command(acprunBinary, "--json", "doctor")
	cmd.Env = []string{"PATH=" + empty, "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if exit, ok := errors.AsType[*exec.ExitError](err); !ok || exit.ExitCode() != exitUsage || !strings.Contains(string(out), "come after it") {
		t.Errorf("acprun --json doctor: %v\n%s", err, out)
	}
}

// "acprun doctor gemini" with a gemini that never answers initialize: its
// row reads "slow", not failing or missing, and the exit status is 7
// (too slow), with a reason that says slow is not broken.
func TestDoctorSlowAgentIsNotBroken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fakebin.Install(t, dir, "gemini", acptest.Script{Initialize: acptest.InitializeScript{Steps: []acptest.Step{{Hang: true}}}}, `[ "$1" = --version ] && { echo "0.9.0"; exit 0; }`)
	r := runDoctorWith(t, dir+":/usr/bin:/bin", "--timeout", "100ms", "gemini")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != exitTimeout || len(lines) < 2 || !strings.Contains(lines[1], "gemini    slow") || !strings.Contains(lastLine(r.stderr), "slow is not broken") {
		t.Errorf("exit status %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
