package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/profiles"
)

// doctorWidth is the width the doctor table fits in.
const doctorWidth = 100

// runDoctor checks the named profiles (all of them when none is named),
// saying on progress as each check ends, and prints one row per provider
// and then what is missing, or with --json the reports. It fails when a
// provider named on the command line is not ready: exitNotFound when its
// program is missing, exitFailed otherwise. Each probe of a check gets
// --timeout, at most bridge.DefaultDoctorTimeout, whether the providers
// are named or not (--timeout's default is sized for a turn, not for a
// program that should answer at once).
func runDoctor(o *options, w, progress io.Writer) error {
	checks, err := doctorChecks(o)
	if err != nil {
		return err
	}
	reports := probe(checks, progress)
	if o.json {
		err = writeDoctorJSON(w, reports)
	} else {
		writeDoctorTable(w, reports, os.Getenv("HOME"))
	}
	if err != nil || len(o.args) == 0 {
		return err
	}
	missing, failed, slow := 0, 0, 0
	for _, r := range reports {
		switch {
		case r.Binary == nil:
			missing++
		case !r.OK():
			failed++
		case !r.ACP && r.TimedOut():
			slow++
		}
	}
	switch {
	case missing > 0:
		return fail(exitNotFound, "doctor: %d of %d providers not installed", missing, len(reports))
	case failed > 0:
		return fail(exitFailed, "doctor: %d of %d providers not ready", failed, len(reports))
	case slow > 0:
		return fail(exitTimeout, "doctor: %d of %d providers too slow to answer initialize: slow is not broken; check again, or allow longer with --timeout", slow, len(reports))
	}
	return nil
}

// doctorChecks returns the checks of the providers o names, or of all,
// each probe bounded and the agent started with the environment a turn
// would give it.
func doctorChecks(o *options) ([]bridge.DoctorCheck, error) {
	timeout := min(o.timeout, bridge.DefaultDoctorTimeout) // a probe is reported slow after it, given up after three times as long
	var ps []*bridge.Profile
	for _, name := range o.args {
		p, ok := profiles.Lookup(name)
		if !ok {
			return nil, fail(exitUsage, "doctor: unknown provider %q; the profiles are %s", name, strings.Join(profileNames(), ", "))
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		ps = profiles.All()
	}
	checks := make([]bridge.DoctorCheck, 0, len(ps))
	for _, p := range ps {
		checks = append(checks, bridge.DoctorCheck{Profile: p, Timeout: timeout,
			Options: bridge.LaunchOptions{Env: agentEnv(o, os.Environ(), p.EnvNames)}})
	}
	return checks, nil
}

// probe runs the checks at once and writes a line on progress as each
// ends, so a slow agent shows while the others are done; the reports keep
// the order of checks.
func probe(checks []bridge.DoctorCheck, progress io.Writer) []bridge.DoctorReport {
	fmt.Fprintf(progress, "doctor: checking %d provider%s\n", len(checks), plural(len(checks)))
	reports := make([]bridge.DoctorReport, len(checks))
	var mu sync.Mutex // one progress line at a time
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() {
			start := time.Now()
			reports[i] = bridge.Doctor(context.Background(), c)[0]
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(progress, "doctor: %s: %s (%.1fs)\n", c.Profile.Name, statusText(reports[i]), time.Since(start).Seconds())
		})
	}
	wg.Wait()
	return reports
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// doctorJSON is one provider in doctor --json: the bridge's report and
// acprun's summary of it.
type doctorJSON struct {
	bridge.DoctorReport
	// Status is the table's word: ok, warn, slow, failing, missing.
	Status string `json:"status"`
	// Ready is true when no check failed.
	Ready bool `json:"ready"`
}

// writeDoctorJSON writes the reports as one JSON array, an object per
// provider (see the package documentation for the fields).
func writeDoctorJSON(w io.Writer, reports []bridge.DoctorReport) error {
	out := make([]doctorJSON, 0, len(reports))
	for _, r := range reports {
		out = append(out, doctorJSON{DoctorReport: r, Status: statusText(r), Ready: r.OK()})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// writeDoctorTable writes one row per provider, fitted to doctorWidth
// columns, then the notes: what is missing and what did not pass.
func writeDoctorTable(w io.Writer, reports []bridge.DoctorReport, home string) {
	rows := [][]string{{"PROVIDER", "STATUS", "VERSION", "ACP", "SIGN-IN", "MODELS", "FOUND IN"}}
	var programs, notes []string
	for _, r := range reports {
		rows = append(rows, []string{r.Provider, statusText(r), orDash(versionText(r)), acpText(r), signInText(r), modelsText(r), foundText(r)})
		// A path cut to fit a column is no use: each goes whole on a line
		// of its own below the table.
		if r.Binary != nil {
			programs = append(programs, r.Provider+": "+binaryPath(r, home))
		}
		for _, m := range r.Missing {
			if r.Binary == nil {
				m = installNote(r.Provider)
			}
			notes = append(notes, r.Provider+": "+m)
		}
		for _, f := range r.Findings {
			if f.Status != bridge.FindingOK && r.Binary != nil {
				notes = append(notes, fmt.Sprintf("%s: %s %s: %s", r.Provider, f.Check, f.Status, oneLine(f.Message)))
			}
		}
	}
	t := table{rows: rows, width: doctorWidth, shrinkWidest: []int{4, 5, 2}}
	t.write(w)
	if len(programs) > 0 {
		fmt.Fprintln(w)
		for _, p := range programs {
			fmt.Fprintln(w, "  "+p)
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, "  "+n)
		}
	}
}

// statusText sums a report up: a binary that is not there is "missing"; one
// that answered wrongly is "failing"; one that answered late, or not in
// the time given, is "slow" (not broken: a busy machine can do that).
func statusText(r bridge.DoctorReport) string {
	switch {
	case r.Binary == nil:
		return "missing"
	case !r.OK():
		return "failing"
	case r.Slow():
		return "slow"
	case hasWarning(r):
		return "warn"
	}
	return "ok"
}

// installNote says what to do about a program doctor did not find, in
// acprun's terms: where it looks, and how to run a copy elsewhere.
func installNote(provider string) string {
	p, ok := profiles.Lookup(provider)
	if !ok {
		return "not installed"
	}
	return fmt.Sprintf("install %s (%s) on PATH or in ~/.local/bin (acprun also looks in the login shell's PATH, npm's global folder and Homebrew), or run a copy elsewhere with --agent '/its/path ARGS'",
		p.Title, strings.Join(p.Binaries, " or "))
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

// versionText is the version the program printed, else the one it gave
// in initialize.
func versionText(r bridge.DoctorReport) string {
	if r.Version == "" && r.AgentInfo != nil {
		return r.AgentInfo.Version
	}
	return r.Version
}

// acpText says whether the program answered initialize ("-" when there is
// no program to ask).
func acpText(r bridge.DoctorReport) string {
	switch {
	case r.Binary == nil:
		return "-"
	case r.ACP:
		return "yes"
	}
	return "no"
}

// foundText is where the program was found: a Resolution.Source.
func foundText(r bridge.DoctorReport) string {
	if r.Binary == nil {
		return "-"
	}
	return r.Binary.Source
}

// binaryPath is the program's path, the home directory written ~.
func binaryPath(r bridge.DoctorReport, home string) string {
	path := r.Binary.Path
	if home != "" && home != "/" && strings.HasPrefix(path, home+"/") {
		path = "~" + path[len(home):]
	}
	return path
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
