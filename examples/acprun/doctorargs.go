package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/acphost/acphost/bridge"
)

// usageError is bad usage of a command, with the help that explains it.
type usageError struct {
	err  error
	help string // "acprun doctor -h"
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// nameList is a flag that may be repeated, each value one name.
type nameList []string

func (n *nameList) String() string { return strings.Join(*n, ",") }

func (n *nameList) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return errors.New("empty name")
	}
	*n = append(*n, v)
	return nil
}

// parseDoctorArgs reads "acprun doctor [flags] [PROVIDER…]" with doctor's
// own flags: a turn's flags (--agent, --cwd, --mode…) mean nothing to it
// and are refused rather than ignored. --provider, repeated, names
// providers as the positional words do.
func parseDoctorArgs(args []string, stderr io.Writer) (*options, error) {
	o := &options{command: "doctor"}
	fs := flag.NewFlagSet("acprun doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var providers nameList
	fs.Var(&providers, "provider", "check this built-in `profile` (repeat it; the same as naming it): "+strings.Join(profileNames(), ", "))
	fs.BoolVar(&o.json, "json", false, "print the reports as JSON on stdout instead of the table")
	fs.DurationVar(&o.timeout, "timeout", bridge.DefaultDoctorTimeout, "report a probe of a provider (--version, its status command, initialize) slow after this long, at most the default; it is given up after three times as long")
	fs.Var(&o.env, "env", "pass the agent `NAME` from this environment (or every NAME* of a prefix), or set NAME=VALUE; repeat it")
	fs.BoolVar(&o.envAll, "env-all", false, "pass the agent acprun's whole environment instead of the minimal one")
	fs.Usage = func() {
		text, _, _ := subcommandHelp("doctor")
		fmt.Fprint(stderr, text)
		fs.PrintDefaults()
	}
	var rest []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, rest = args[:i], args[i+1:]
	}
	var names []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &usageError{err: err, help: "acprun doctor -h"}
		}
		if fs.NArg() == 0 {
			break
		}
		names = append(names, fs.Arg(0))
		args = fs.Args()[1:]
	}
	o.args = append(append([]string(providers), names...), rest...)
	if o.timeout <= 0 {
		return nil, &usageError{err: fmt.Errorf("--timeout %v: must be positive", o.timeout), help: "acprun doctor -h"}
	}
	return o, nil
}
