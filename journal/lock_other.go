//go:build !unix

package journal

import (
	"fmt"
	"os"
)

// lockFile opens the lock file beside the journal. Outside Unix it takes
// no lock: there, keeping to one writer at a time is the app's job.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: opening the lock %s: %w", path, err)
	}
	return f, nil
}
