package terminal_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: a
// terminal's reader, stream or wait that nothing ended.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
