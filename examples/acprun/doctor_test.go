package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

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
