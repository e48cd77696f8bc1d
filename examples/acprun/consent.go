package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/acphost/acphost/bridge"
)

// allowAutonomousFlag answers the consent question in advance.
const allowAutonomousFlag = "--allow-autonomous"

// consenter answers a session's consent question (an agent that acts
// without asking and cannot be moved to a mode that asks, in host Build):
// with --allow-autonomous yes, on a terminal it asks the way a CLI asks
// before a dangerous choice, and otherwise it refuses, naming the flag,
// rather than wait on input that never comes.
type consenter struct {
	allow  bool      // --allow-autonomous
	ask    bool      // stdin is a terminal
	prompt io.Writer // where the question goes (stderr)
	stdin  *lineReader
	colors palette
}

// consentSession is what of a session the question needs.
type consentSession interface {
	Authority() bridge.AuthorityState
	GrantAutonomy()
}

// settle consents for sess, or returns why the run stops.
func (c *consenter) settle(ctx context.Context, sess consentSession) error {
	if c.allow {
		sess.GrantAutonomy()
		return nil
	}
	st := sess.Authority()
	if !st.ConsentNeeded {
		return nil
	}
	what := strings.TrimSpace(st.Reason)
	if !c.ask {
		return fail(exitFailed, "the agent would act without asking (%s), which host mode build cannot stop; "+
			"pass %s to let it for this run, or choose --mode ask or plan", what, allowAutonomousFlag)
	}
	fmt.Fprintf(c.prompt, "%s %s\n  %s [y/N] ", c.colors.yellow("!"), c.colors.bold("The agent will act without asking: "+what+"."),
		"acprun cannot review its edits and commands. Let it act on its own for this session?")
	var line string
	select {
	case l, ok := <-c.stdin.next():
		if !ok {
			fmt.Fprintln(c.prompt)
		}
		line = l
	case <-ctx.Done():
		fmt.Fprintln(c.prompt)
		return ctx.Err()
	}
	if answer := strings.ToLower(strings.TrimSpace(line)); answer != "y" && answer != "yes" {
		return fail(exitFailed, "not allowed: the agent acts without asking (pass %s to allow it)", allowAutonomousFlag)
	}
	sess.GrantAutonomy()
	return nil
}
