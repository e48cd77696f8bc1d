package fsroot

import (
	"errors"
	"fmt"
)

// Sentinel errors a caller can branch on with errors.Is. Refusals returned by
// a Root are *PathError values that wrap one of these (or, for a missing file,
// an error that satisfies errors.Is(err, fs.ErrNotExist)).
var (
	// ErrNotAbsolute means the requested path was relative; ACP paths are
	// always absolute.
	ErrNotAbsolute = errors.New("path is not absolute")
	// ErrOutsideRoot means the path, after cleaning and resolving symlinks,
	// lies outside the session's cwd and granted directories.
	ErrOutsideRoot = errors.New("path is outside the session's directories")
	// ErrTooLarge means the file (or overlay buffer) is bigger than the
	// read cap, or the content of a write is bigger than the write cap.
	ErrTooLarge = errors.New("file is larger than the size limit")
	// ErrNotText means a file read as text is not valid UTF-8. Serving it
	// would mean substituting U+FFFD for the bad bytes, and an agent that
	// saved the text back would destroy them. The error is a *NotTextError,
	// which carries the offset of the first bad byte.
	ErrNotText = errors.New("file is not UTF-8 text")
	// ErrReadOnly means writes are switched off for the session; the
	// error text carries the reason the caller gave to SetReadOnly.
	ErrReadOnly = errors.New("write refused: session is read-only")
	// ErrNotRegular means the path names a directory, device, pipe or other
	// non-regular file, which a text read or write must not touch.
	ErrNotRegular = errors.New("not a regular file")
	// ErrInvalidRange means a negative line or limit was requested.
	ErrInvalidRange = errors.New("line and limit must not be negative")
	// ErrClosed means the Root was closed.
	ErrClosed = errors.New("closed")
	// ErrConnectionLost means the SSH connection under an SFTP root dropped
	// during the operation. The operation may be retried: a root built with
	// NewSFTPConn asks its SSHConn for a client again on its next use.
	ErrConnectionLost = errors.New("ssh connection lost")
)

// NotTextError reports where a file stops being UTF-8. It satisfies
// errors.Is(err, ErrNotText).
type NotTextError struct {
	// Offset is the byte offset, from the start of the file, of the first
	// byte that is not part of a valid UTF-8 sequence.
	Offset int
}

// Error reads like "file is not UTF-8 text (invalid byte sequence at byte
// offset 17)".
func (e *NotTextError) Error() string {
	return fmt.Sprintf("%v (invalid byte sequence at byte offset %d)", ErrNotText, e.Offset)
}

// Is makes errors.Is(err, ErrNotText) true.
func (e *NotTextError) Is(target error) bool { return target == ErrNotText }

// PathError records a refused or failed operation on one path. Err is one of
// the package sentinels or the underlying file-system error.
type PathError struct {
	Op   string // "read", "write", "grant" or "watch"
	Path string // the path as the caller gave it
	Err  error
}

// Error reads like "fsroot: read /etc/passwd: path is outside the session's
// directories".
func (e *PathError) Error() string {
	return "fsroot: " + e.Op + " " + e.Path + ": " + e.Err.Error()
}

// Unwrap lets errors.Is and errors.As see the cause.
func (e *PathError) Unwrap() error { return e.Err }

func pathErr(op, path string, err error) error {
	return &PathError{Op: op, Path: path, Err: err}
}

// outsideErr explains where a symlinked path really points, so the user sees
// why a path that looks inside the workspace was refused.
func outsideErr(requested, resolved string) error {
	if requested == resolved {
		return ErrOutsideRoot
	}
	return fmt.Errorf("%w (it resolves to %s)", ErrOutsideRoot, resolved)
}

// readOnlyErr appends the caller's reason, e.g. "(Ask mode)".
func readOnlyErr(reason string) error {
	if reason == "" {
		return ErrReadOnly
	}
	return fmt.Errorf("%w (%s)", ErrReadOnly, reason)
}
