package terminal

import (
	"time"

	"github.com/acphost/acphost/acpclient"
)

// Options turns on the terminals a bridge serves to its agent
// (bridge.Config.Terminals): terminal/create, terminal/output,
// terminal/wait_for_exit, terminal/kill and terminal/release. The zero value
// takes the defaults.
type Options struct {
	// OutputByteLimit is how much of a terminal's output is kept when the
	// agent sets no outputByteLimit (default DefaultOutputBytes).
	OutputByteLimit int
	// MaxOutputByteLimit caps the outputByteLimit an agent may ask for, so
	// an agent cannot make the host hold more (default
	// DefaultMaxOutputBytes).
	MaxOutputByteLimit int
	// PTY runs each command with a pseudo-terminal as its stdout and
	// stderr instead of a pipe, for apps that render a terminal emulator:
	// the command sees a terminal (isatty) and behaves as in one, and its
	// output is merged as a terminal shows it, with CR LF line ends (see
	// acpclient.CommandTransport.PTY). Local honours it; SSH runs with
	// pipes whatever it says.
	PTY bool
	// Runner starts the commands. Default: where the agent runs, as its
	// commands must run where its files are: SSH over the agent's
	// connection when its transport is an acpclient.SSHTransport (also
	// inside a profile's launch), Local{} otherwise.
	Runner Runner
}

// Defaults of Options.
const (
	DefaultOutputBytes    = 1 << 20
	DefaultMaxOutputBytes = 16 << 20
)

// livePiece bounds the output one terminal event carries: a consumer that
// lags gets the newest output, marked Truncated, not a backlog
// (terminal/output still has the whole window).
const livePiece = 16 << 10

// liveInterval is the least time between two terminal events of one
// terminal (the first goes out at once): enough for a view to look live.
const liveInterval = 25 * time.Millisecond

// limitFor is the output window for a request's outputByteLimit.
func (o *Options) limitFor(asked *int64) (int, error) {
	limit := o.OutputByteLimit
	if limit <= 0 {
		limit = DefaultOutputBytes
	}
	maxLimit := o.MaxOutputByteLimit
	if maxLimit <= 0 {
		maxLimit = DefaultMaxOutputBytes
	}
	if asked != nil {
		if *asked < 0 {
			return 0, acpclient.NewError(acpclient.CodeInvalidParams, "terminal/create: outputByteLimit %d is negative", *asked)
		}
		limit = int(min(*asked, int64(maxLimit)))
	}
	return min(limit, maxLimit), nil
}
