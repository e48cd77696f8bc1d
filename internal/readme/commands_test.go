package readme

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// firstCommand returns the first shell command of the README's "Try it"
// section and the prose before it.
func firstCommand(t *testing.T, readme string) (command, prose string) {
	t.Helper()
	_, section, ok := strings.Cut(readme, "\n## Try it\n")
	if !ok {
		t.Fatal(`README has no "## Try it" section`)
	}
	prose, block, ok := strings.Cut(section, "```sh\n")
	if !ok {
		t.Fatal(`"Try it" has no sh block`)
	}
	command, _, _ = strings.Cut(block, "\n")
	return command, prose
}

// demoCommand is the form of the README's first command: acprun with a
// prompt and no flags.
var demoCommand = regexp.MustCompile(`^go run (\./examples/acprun) "([^"]+)"$`)

// TestREADMEFirstCommand: the README's first command, run as a fresh clone
// would (allowing the write it asks for), writes what the README says it
// writes, and nothing else.
func TestREADMEFirstCommand(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	command, prose := firstCommand(t, string(readme))
	m := demoCommand.FindStringSubmatch(command)
	if m == nil {
		t.Fatalf("the first command %q is not %s", command, demoCommand)
	}
	workspace := t.TempDir()
	run := exec.Command("go", "run", m[1], "--approve", "allow", "--cwd", workspace, m[2])
	run.Dir = "../.."
	// HOME stays, and with it Go's build cache; the journal goes to the
	// test's own directory.
	run.Env = append(os.Environ(), "XDG_DATA_HOME="+t.TempDir(), "NO_COLOR=1")
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", command, err, out)
	}
	written, err := os.ReadDir(workspace)
	if err != nil || len(written) == 0 {
		t.Fatalf("%s wrote nothing (%v):\n%s", command, err, out)
	}
	for _, f := range written {
		if !strings.Contains(prose, "`"+f.Name()+"`") {
			t.Errorf("%s writes %s, which the README does not say before it:\n%s", command, f.Name(), prose)
		}
	}
	if !strings.Contains(m[2], written[0].Name()) {
		t.Errorf("the prompt %q does not ask for the %s it gets", m[2], written[0].Name())
	}
}
