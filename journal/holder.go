package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The lock file beside a journal names its holder, one line "PID PROGRAM",
// so a second writer's ErrInUse says which program to close. The line is
// a hint: the lock itself is what keeps writers apart.

// holderLimit bounds what is read of a lock file.
const holderLimit = 512

// writeHolder writes this process into the lock file it holds. A failure
// only loses the hint.
func writeHolder(f *os.File) {
	prog := "an unknown program"
	if exe, err := os.Executable(); err == nil {
		prog = filepath.Base(exe)
	}
	line := strconv.Itoa(os.Getpid()) + " " + prog + "\n"
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(line), 0)
	}
}

// readHolder describes the holder the lock file at path names, or says
// it names none (its holder has not written it yet).
func readHolder(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "another program"
	}
	defer f.Close()
	buf := make([]byte, holderLimit)
	n, _ := f.Read(buf)
	pid, prog, ok := strings.Cut(strings.TrimSpace(string(buf[:n])), " ")
	if _, err := strconv.Atoi(pid); !ok || err != nil {
		return "another program"
	}
	return fmt.Sprintf("%s (pid %s)", strconv.QuoteToGraphic(prog), pid)
}
