package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type timingRunner struct{ Runner }

func (r timingRunner) Run(ctx context.Context, args, env []string, stdin []byte) ([]byte, error) {
	t0 := time.Now()
	out, err := r.Runner.Run(ctx, args, env, stdin)
	name := args[len(args)-1]
	for _, a := range args {
		if !strings.HasPrefix(a, "-") && a != "git" && !strings.Contains(a, "=") {
			name = a
			break
		}
	}
	if len(name) > 30 {
		name = name[:30]
	}
	fmt.Fprintf(os.Stderr, "%8.1fms %q\n", float64(time.Since(t0).Microseconds())/1000, name)
	return out, err
}

func BenchmarkDebugTiming(b *testing.B) {
	ws := benchTree(b, 20_000)
	ctx := context.Background()
	s, _ := Open(ctx, Options{Workspace: ws, Dir: filepath.Join(b.TempDir(), "cp"), Runner: timingRunner{Local{}}})
	prev, _ := s.Snapshot(ctx, "first")
	for i := range 3 {
		os.WriteFile(filepath.Join(ws, "pkg001/file001.go"), []byte(fmt.Sprint(i)), 0o644)
		fmt.Fprintln(os.Stderr, "--- snapshot")
		cp, _ := s.Snapshot(ctx, fmt.Sprint("t", i))
		fmt.Fprintln(os.Stderr, "--- changes")
		s.Changes(ctx, prev.ID, cp.ID)
		prev = cp
		fmt.Fprintln(os.Stderr, "--- status")
		timingRunner{Local{}}.Run(ctx, []string{"sh", "-c", `cd "$1" && exec git status --porcelain`, "sh", ws}, []string{"HOME=" + ws}, nil)
	}
}
