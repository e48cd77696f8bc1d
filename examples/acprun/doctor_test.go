package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
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
