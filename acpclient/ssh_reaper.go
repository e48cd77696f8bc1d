package acpclient

import (
	"bufio"
	_ "embed" // the remote reaper's source
	"io"
	"strings"
)

// remoteReaper is the Python program that holds a remote terminal
// command's tree (see SSHTransport): python3 is the one interpreter that
// hosts almost always have and that can make a child subreaper (prctl
// through ctypes). The wrapper runs it with the command as its arguments
// when python3 is there.
//
//go:embed ssh_reaper.py
var remoteReaper string

// readContainment reads the wrapper's own stderr (never the command's):
// its first "acphost: " line says whether the command's tree is held
// ("acphost: contained") or why not ("acphost: uncontained: WHY"); the rest
// is discarded. It sets *why and closes said once it knows, or once the
// stderr has ended without saying (then why says so).
func readContainment(r io.Reader, why *string, said chan<- struct{}) {
	sc := bufio.NewScanner(r)
	told := false
	for sc.Scan() {
		line := sc.Text()
		if told || !strings.HasPrefix(line, "acphost: ") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "acphost: uncontained: "); ok {
			*why = rest
		} else if line != "acphost: contained" {
			continue
		}
		told = true
		close(said)
	}
	if !told {
		*why = "the host did not say whether the command's processes are held"
		close(said)
	}
	_, _ = io.Copy(io.Discard, r)
}
