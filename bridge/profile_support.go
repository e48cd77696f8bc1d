package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/acphost/acphost/acpclient"
)

// This file holds what a Profile written outside this package needs from
// the bridge beyond the Profile and Provider types: its typed launch
// options, the agent host's files and home, and the readers of shapes
// several agents share.

// ErrVendorOptions is wrapped when LaunchOptions.Vendor holds a value of
// another profile's type.
var ErrVendorOptions = errors.New("launch options of another profile")

// VendorOptions returns the profile-specific options in o.Vendor as T: the
// zero T when Vendor is nil, the value when it is a T or a non-nil *T, and
// an error wrapping ErrVendorOptions for anything else. A profile's Args
// calls it, so a wrong type refuses the launch instead of being ignored.
func VendorOptions[T any](o LaunchOptions) (T, error) {
	var zero T
	switch v := o.Vendor.(type) {
	case nil:
		return zero, nil
	case T:
		return v, nil
	case *T:
		if v != nil {
			return *v, nil
		}
		return zero, nil
	}
	return zero, fmt.Errorf("%w: LaunchOptions.Vendor is a %T, want a %T", ErrVendorOptions, o.Vendor, zero)
}

// HostFS returns the agent host's file system: o.FS, else the local one.
func (o LaunchOptions) HostFS() HostFS {
	if o.FS != nil {
		return o.FS
	}
	return LocalFS{}
}

// HostHome returns the agent host's home directory: o.Home, else HOME of
// o.Env (or of this process when Env is nil).
func (o LaunchOptions) HostHome() string {
	if o.Home != "" {
		return o.Home
	}
	return (&Resolver{Env: o.Env}).getenv("HOME")
}

// NormalizeCompactionStatus maps an agent's word for the state of a
// compaction onto the Compaction* statuses ("in_progress", "running" →
// started; "applied", "done" → completed); other words pass unchanged.
func NormalizeCompactionStatus(word string) string {
	switch word {
	case "in_progress", "started", "running":
		return CompactionStarted
	case "completed", "applied", "done":
		return CompactionCompleted
	}
	return word
}

// ContentText reads text an agent sent either as a JSON string or as an
// array of content blocks (their text concatenated), as vendors send
// compaction summaries; anything else reads as "".
func ContentText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []acpclient.ContentBlock
	if json.Unmarshal(raw, &blocks) == nil {
		var b strings.Builder
		for _, blk := range blocks {
			b.WriteString(blk.Text)
		}
		return b.String()
	}
	return ""
}
