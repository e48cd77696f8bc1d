// Command fakeagent is the acptest fake ACP agent as a process: it follows a
// JSON script (see acptest.Script) and speaks ACP on stdin/stdout, writing
// its diagnostics and Stderr steps to stderr.
//
// Usage:
//
//	fakeagent -script PATH [-record PATH]
//
// ACPTEST_SCRIPT and ACPTEST_RECORD stand in for the flags. -record writes
// every line received, one per line. The exit code is the one of an Exit
// step, 0 after stdin closes, 130 after SIGINT, 2 on a usage or script
// error, 1 on a read error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/acphost/acphost/acptest"
)

func main() {
	scriptPath := flag.String("script", os.Getenv(acptest.EnvScript), "JSON script `file` (default $"+acptest.EnvScript+")")
	recordPath := flag.String("record", os.Getenv(acptest.EnvRecord), "`file` to write every received line to (default $"+acptest.EnvRecord+")")
	flag.Parse()
	if *scriptPath == "" {
		fmt.Fprintln(os.Stderr, "fakeagent: no script: pass -script PATH or set "+acptest.EnvScript)
		os.Exit(2)
	}
	script, err := acptest.LoadScript(*scriptPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		os.Exit(2)
	}
	if script.IgnoreSIGTERM {
		signal.Ignore(syscall.SIGTERM)
	}
	agent := acptest.NewAgent(script)
	agent.Stderr = os.Stderr
	agent.Exit = os.Exit
	if *recordPath != "" {
		f, err := os.Create(*recordPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakeagent:", err)
			os.Exit(2)
		}
		defer f.Close()
		agent.Record = f
	}
	// SIGINT ends the agent with code 130, even while a read of stdin
	// blocks. Watching a signal also keeps the runtime from calling a
	// StayAfterEOF agent, blocked for good, a deadlock.
	ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt)
	stopInterrupt := context.AfterFunc(ctx, func() { os.Exit(130) })
	err = agent.Serve(ctx, os.Stdin, os.Stdout)
	stopInterrupt()
	var exit *acptest.ExitError
	switch {
	case errors.As(err, &exit):
		os.Exit(exit.Code)
	case errors.Is(err, context.Canceled):
		os.Exit(130)
	case err != nil:
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		os.Exit(1)
	}
}
