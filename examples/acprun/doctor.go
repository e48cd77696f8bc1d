package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/profiles"
)

// runDoctor checks the named profiles (all of them when none is named) and
// prints one row per provider, then what is missing. It fails when a
// provider named on the command line is not ready. Each probe of a check
// gets --timeout, at most bridge.DefaultDoctorTimeout, whether the
// providers are named or not (--timeout's default is sized for a turn,
// not for a program that should answer at once).
func runDoctor(o *options, w io.Writer) error {
	timeout := min(o.timeout, bridge.DefaultDoctorTimeout)
	var checks []bridge.DoctorCheck
	for _, name := range o.args {
		p, ok := profiles.Lookup(name)
		if !ok {
			return fail(exitUsage, "doctor: unknown provider %q; the profiles are %s", name, strings.Join(profileNames(), ", "))
		}
		checks = append(checks, bridge.DoctorCheck{Profile: p, Timeout: timeout})
	}
	if len(checks) == 0 {
		for _, p := range profiles.All() {
			checks = append(checks, bridge.DoctorCheck{Profile: p, Timeout: timeout})
		}
	}
	reports := bridge.Doctor(context.Background(), checks...)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tSTATUS\tBINARY\tVERSION\tACP\tSIGN-IN\tMODELS")
	var notes []string
	failed := 0
	for _, r := range reports {
		status := statusText(r)
		if !r.OK() {
			failed++
		}
		binary := "-"
		if r.Binary != nil {
			binary = r.Binary.Path + " (" + r.Binary.Source + ")"
		}
		acp := "no"
		if r.ACP {
			acp = "yes"
			if r.AgentInfo != nil {
				acp = "yes: " + r.AgentInfo.Name + " " + r.AgentInfo.Version
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Provider, status, binary, orDash(r.Version), acp, signInText(r), modelsText(r))
		for _, m := range r.Missing {
			notes = append(notes, r.Provider+": "+m)
		}
		for _, f := range r.Findings {
			if f.Status != bridge.FindingOK && r.Binary != nil {
				notes = append(notes, fmt.Sprintf("%s: %s %s: %s", r.Provider, f.Check, f.Status, oneLine(f.Message)))
			}
		}
	}
	tw.Flush()
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, "  "+n)
		}
	}
	if len(o.args) > 0 && failed > 0 {
		return fail(exitFailed, "doctor: %d of %d providers not ready", failed, len(reports))
	}
	return nil
}

// statusText sums a report up: a binary that is not there is "missing"; one
// that is there but did not answer a probe in time is "unresponsive" (a
// failed check) or "slow" (only a warning); one that answered wrongly is
// "failing".
func statusText(r bridge.DoctorReport) string {
	switch {
	case r.Binary == nil:
		return "missing"
	case !r.OK() && r.TimedOut():
		return "unresponsive"
	case !r.OK():
		return "failing"
	case r.TimedOut():
		return "slow"
	case hasWarning(r):
		return "warn"
	}
	return "ok"
}

func hasWarning(r bridge.DoctorReport) bool {
	for _, f := range r.Findings {
		if f.Status == bridge.FindingWarn {
			return true
		}
	}
	return false
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// signInText says whether the user must sign in, with the methods offered
// when that is only known once a session opens.
func signInText(r bridge.DoctorReport) string {
	var methods []string
	for _, m := range r.AuthMethods {
		methods = append(methods, m.ID)
	}
	switch r.SignIn {
	case bridge.SignInSignedIn:
		if r.Account != "" {
			return "signed in as " + r.Account
		}
		return "signed in"
	case bridge.SignInSignedOut:
		return "signed out"
	case bridge.SignInNotRequired:
		return "not needed"
	case bridge.SignInUnknown:
		return "unknown (" + strings.Join(methods, ", ") + ")"
	}
	return "-"
}

// modelsText is the number of models listed and the current one.
func modelsText(r bridge.DoctorReport) string {
	if r.Models == nil || len(r.Models.AvailableModels) == 0 {
		return "-"
	}
	s := fmt.Sprintf("%d", len(r.Models.AvailableModels))
	if r.Models.CurrentModelID != "" {
		s += ", current " + r.Models.CurrentModelID
	}
	return s
}
