package bridge

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/acphost/acphost/acpclient"
)

// TestFileErrorSaysTheOperationOnce: an error that names the path already
// says what was done to it and goes to the agent as it is; another gets
// the operation and the path; a missing file is -32002.
func TestFileErrorSaysTheOperationOnce(t *testing.T) {
	for _, tt := range []struct {
		err      error
		wantMsg  string
		wantCode int
	}{
		{errors.New("fsroot: read /w/a: path is outside the session's directories"), "fsroot: read /w/a: path is outside the session's directories", acpclient.CodeInternalError},
		{errors.New("disk on fire"), "reading /w/a: disk on fire", acpclient.CodeInternalError},
		{fmt.Errorf("gone: %w", fs.ErrNotExist), "reading /w/a: gone: file does not exist", acpclient.CodeResourceNotFound},
	} {
		var e *acpclient.Error
		if !errors.As(fileError("reading", "/w/a", tt.err), &e) || e.Message != tt.wantMsg || e.Code != tt.wantCode {
			t.Errorf("fileError(%v) = %+v, want %d %q", tt.err, e, tt.wantCode, tt.wantMsg)
		}
	}
}
