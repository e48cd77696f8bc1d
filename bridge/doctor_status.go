package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acphost/acphost/acpclient"
)

// Sign-in states (DoctorReport.SignIn), as far as a health check can tell
// without opening a session.
const (
	// SignInNotRequired: the agent offers no sign-in methods.
	SignInNotRequired = "not_required"
	// SignInUnknown: the agent offers sign-in methods; ACP says whether
	// one is needed only when a session opens (session/new failing with
	// auth_required), so Doctor cannot know.
	SignInUnknown = "unknown"
	// SignInSignedIn: the agent's status command says the user is signed in.
	SignInSignedIn = "signed_in"
	// SignInSignedOut: the agent's status command says nobody is signed in.
	SignInSignedOut = "signed_out"
)

// AgentStatus is what a profile's status command (Profile.StatusArgs)
// tells about the agent without a session.
type AgentStatus struct {
	// Models are the models it lists (nil when none).
	Models *acpclient.ModelState
	// SignIn is SignInSignedIn, SignInSignedOut, or "" when it does not say.
	SignIn string
	// Account is who is signed in, when it says.
	Account string
}

// statusProbe is the outcome of running a profile's status command.
type statusProbe struct {
	command  string // as shown in findings: the program and StatusArgs
	status   *AgentStatus
	err      error
	timedOut time.Duration // the bound it exceeded; 0 when it finished
}

// probeStatus runs the profile's status command directly (no shell) as a
// helper command (acpclient.CommandTransport.Output: its group ends with
// it), if it has one; nil when it has none.
func probeStatus(ctx context.Context, t *acpclient.CommandTransport, p *Profile, name string, timeout time.Duration) *statusProbe {
	if len(p.StatusArgs) == 0 || p.ParseStatus == nil {
		return nil
	}
	probe := &statusProbe{command: name + " " + strings.Join(p.StatusArgs, " ")}
	out, err := helperCommand(t, p.StatusArgs).Output(ctx)
	if err != nil {
		// A failing status command's listing is not trusted, even in part.
		var exit *acpclient.ExitError
		if errors.As(err, &exit) && exit.Stderr != "" {
			err = fmt.Errorf("%w: %s", exit.Err, firstLine([]byte(exit.Stderr)))
		}
		if ctx.Err() != nil {
			probe.timedOut = timeout
		}
		probe.err = err
		return probe
	}
	st := p.ParseStatus(out)
	probe.status = &st
	return probe
}

func firstLine(b []byte) string {
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return line
}

// learnSignIn sets the report's sign-in state: the status command's word
// when it says, else what the initialize answer's methods allow to tell.
func (r *DoctorReport) learnSignIn(init *acpclient.InitializeResponse, probe *statusProbe) {
	if probe != nil && probe.status != nil && probe.status.SignIn != "" {
		r.SignIn, r.Account = probe.status.SignIn, probe.status.Account
		if r.SignIn == SignInSignedIn {
			who := ""
			if r.Account != "" {
				who = " as " + r.Account
			}
			r.add("auth", FindingOK, "signed in%s (%s)", who, probe.command)
			return
		}
		r.add("auth", FindingWarn, "not signed in (%s)", probe.command)
		r.Missing = append(r.Missing, "sign in")
		return
	}
	if init == nil {
		return
	}
	if ids := authIDs(init.AuthMethods); len(ids) > 0 {
		r.SignIn = SignInUnknown
		r.add("auth", FindingOK, "sign-in methods offered: %s; whether one is needed shows when a session opens", strings.Join(ids, ", "))
		return
	}
	r.SignIn = SignInNotRequired
	r.add("auth", FindingOK, "no sign-in methods offered")
}

// learnModels sets the models the agent lists without a session: from its
// initialize answer, else from its status command.
func (r *DoctorReport) learnModels(init *acpclient.InitializeResponse, prov *Provider, probe *statusProbe) {
	if init != nil && prov != nil && prov.ModelsFromInitialize != nil {
		if m := prov.ModelsFromInitialize(init); m != nil && len(m.AvailableModels) > 0 {
			r.Models = m
			r.add("models", FindingOK, "%s, listed in initialize", describeModels(m))
			return
		}
	}
	switch {
	case probe == nil:
	case probe.timedOut > 0:
		r.addTimeout("models", probe.command, probe.timedOut)
	case probe.err != nil:
		r.add("models", FindingWarn, "%s failed: %v", probe.command, probe.err)
	case probe.status.Models == nil:
		r.add("models", FindingWarn, "%s listed no models", probe.command)
	default:
		r.Models = probe.status.Models
		r.add("models", FindingOK, "%s, listed by %s", describeModels(r.Models), probe.command)
	}
}

// describeModels renders a model list for a finding.
func describeModels(m *acpclient.ModelState) string {
	ids := make([]string, 0, len(m.AvailableModels))
	for _, mi := range m.AvailableModels {
		id := mi.ModelID
		if id == m.CurrentModelID {
			id += " (current)"
		}
		ids = append(ids, id)
	}
	return fmt.Sprintf("%d models: %s", len(ids), strings.Join(ids, ", "))
}

// doctorProvider returns the profile's provider hooks for the options, for
// what they read from an initialize answer.
func doctorProvider(p *Profile, o LaunchOptions) *Provider {
	if p.NewProvider == nil {
		return nil
	}
	return p.NewProvider(NewLaunch(p, o))
}
