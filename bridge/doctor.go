package bridge

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acphost/acphost/acpclient"
)

// DefaultDoctorTimeout is how long a probe of a provider in Doctor may
// take before it is reported slow.
const DefaultDoctorTimeout = 20 * time.Second

// DoctorCheck is one configured provider for Doctor to examine.
type DoctorCheck struct {
	Profile *Profile
	Options LaunchOptions
	// Timeout is how long each probe (the version probe, the status
	// command, the ACP handshake) may take before it is reported slow
	// (FindingSlow; default DefaultDoctorTimeout). An agent on a loaded
	// machine can take longer than usual: that is not a failure.
	Timeout time.Duration
	// GiveUp bounds each probe (default three times Timeout): one still
	// running then is ended and reported slow and timed out, not failed.
	// The probes of a check run at once, so a check takes about this long
	// at most, after its binary is found (which GiveUp bounds too).
	GiveUp time.Duration
}

// Finding statuses.
const (
	FindingOK   = "ok"
	FindingWarn = "warn"
	FindingFail = "fail"
	// FindingSlow: the probe answered only after the check's Timeout, or
	// not before its GiveUp (Finding.TimedOut): the program is there and
	// is slow, perhaps on a busy machine; it is not known to be broken.
	FindingSlow = "slow"
)

// Finding is one result of a doctor check.
type Finding struct {
	// Check names what was checked: "binary", "version", "acp", "auth",
	// "models".
	Check   string `json:"check"`
	Status  string `json:"status"`
	Message string `json:"message"`
	// TimedOut is true when the probe behind the finding did not finish
	// within the check's Timeout: the program was found but did not
	// answer, which is not the same as not being there.
	TimedOut bool `json:"timedOut,omitempty"`
}

// DoctorReport is what Doctor found out about one provider.
type DoctorReport struct {
	Provider string `json:"provider"`
	// Binary is where the program was found (nil when it was not).
	Binary *Resolution `json:"binary,omitempty"`
	// Version is the version the program printed ("" when unknown).
	Version string `json:"version,omitempty"`
	// ACP is true when the program started in ACP mode and answered
	// initialize; AgentInfo and AuthMethods are from that answer.
	ACP         bool                      `json:"acp"`
	AgentInfo   *acpclient.Implementation `json:"agentInfo,omitempty"`
	AuthMethods []acpclient.AuthMethod    `json:"authMethods,omitempty"`
	// SignIn is whether the user must sign in, as far as can be known
	// without a session (a SignIn* constant; "" when nothing was learned),
	// and Account who is signed in when the agent says.
	SignIn  string `json:"signIn,omitempty"`
	Account string `json:"account,omitempty"`
	// Models are the models the agent lists without a session: in its
	// initialize answer (Provider.ModelsFromInitialize), else through its
	// status command (Profile.StatusArgs); nil when neither says.
	Models *acpclient.ModelState `json:"models,omitempty"`
	// Findings are the individual results, in the order checked.
	Findings []Finding `json:"findings"`
	// Missing lists what stands between the user and a working provider.
	Missing []string `json:"missing,omitempty"`
}

// OK reports whether nothing failed.
func (r *DoctorReport) OK() bool {
	for _, f := range r.Findings {
		if f.Status == FindingFail {
			return false
		}
	}
	return true
}

func (r *DoctorReport) add(check, status, format string, args ...any) {
	r.Findings = append(r.Findings, Finding{Check: check, Status: status, Message: fmt.Sprintf(format, args...)})
}

// addTimeout records a probe that did not finish in time: slow, not
// broken.
func (r *DoctorReport) addTimeout(check, probe string, timeout time.Duration) {
	r.Findings = append(r.Findings, Finding{Check: check, Status: FindingSlow, TimedOut: true,
		Message: fmt.Sprintf("%s timed out: no answer within %v (slow or stuck; not known to be broken)", probe, timeout)})
}

// TimedOut reports whether a probe timed out: the binary is there but
// did not answer in time.
func (r *DoctorReport) TimedOut() bool {
	for _, f := range r.Findings {
		if f.TimedOut {
			return true
		}
	}
	return false
}

// Slow reports whether a probe was slow (FindingSlow): it answered late,
// or timed out.
func (r *DoctorReport) Slow() bool {
	for _, f := range r.Findings {
		if f.Status == FindingSlow {
			return true
		}
	}
	return false
}

// markSlow turns the findings from `from` on that passed into slow ones
// when their probe took longer than limit.
func (r *DoctorReport) markSlow(from int, took, limit time.Duration) {
	if took <= limit {
		return
	}
	for i := from; i < len(r.Findings); i++ {
		if f := &r.Findings[i]; f.Status == FindingOK {
			f.Status = FindingSlow
			f.Message += fmt.Sprintf(" (slow: %v, over %v)", took.Round(100*time.Millisecond), limit)
		}
	}
}

// Doctor checks each provider: where its binary is, its version, whether it
// starts in ACP mode and answers initialize, which sign-in methods it
// offers, and what it tells without a session: the models it lists and
// whether the user is signed in (its status command's word when the
// profile has one, else what the initialize answer's methods allow to
// tell). The checks run concurrently, and so do the probes of each; a
// probe that takes long is reported slow (FindingSlow), not failed;
// reports come back in the order of checks. Doctor starts the agents it checks and ends them before it
// returns; it writes nothing (no overlays are prepared).
func Doctor(ctx context.Context, checks ...DoctorCheck) []DoctorReport {
	reports := make([]DoctorReport, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reports[i] = doctorOne(ctx, c)
		}()
	}
	wg.Wait()
	return reports
}

func doctorOne(ctx context.Context, c DoctorCheck) DoctorReport {
	p := c.Profile
	rep := DoctorReport{Provider: p.Name}
	slow := c.Timeout
	if slow <= 0 {
		slow = DefaultDoctorTimeout
	}
	giveUp := c.GiveUp
	if giveUp <= 0 {
		giveUp = 3 * slow
	}
	probeCtx := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, giveUp) }

	rctx, cancel := probeCtx()
	cmd, res, err := p.Command(rctx, c.Options)
	cancel()
	if err != nil {
		rep.add("binary", FindingFail, "%v", err)
		rep.Missing = append(rep.Missing, fmt.Sprintf("install %s (%s) where programs are looked for (PATH, ~/.local/bin, npm's global folder), or give its path (LaunchOptions.Binary)",
			p.Title, strings.Join(p.Binaries, " or ")))
		return rep
	}
	rep.Binary = &res
	rep.add("binary", FindingOK, "%s found in %s (%s)", res.Name, res.Source, res.Path)

	// The probes run at once, each into its own report, merged in a fixed
	// order: on a busy machine one slow probe does not eat the others'
	// time.
	var vrep, hrep DoctorReport
	var probe *statusProbe
	var init *acpclient.InitializeResponse
	timed := func(r *DoctorReport, run func(ctx context.Context)) {
		pctx, cancel := probeCtx()
		defer cancel()
		start := time.Now()
		run(pctx)
		if r != nil {
			r.markSlow(0, time.Since(start), slow)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { timed(&vrep, func(ctx context.Context) { vrep.version(ctx, cmd, p, res.Name, giveUp) }) })
	wg.Go(func() { timed(nil, func(ctx context.Context) { probe = probeStatus(ctx, cmd, p, res.Name, giveUp) }) })
	wg.Go(func() { timed(&hrep, func(ctx context.Context) { init = hrep.handshake(ctx, cmd, p, res, giveUp) }) })
	wg.Wait()
	rep.Version = vrep.Version
	rep.ACP, rep.AgentInfo, rep.AuthMethods = hrep.ACP, hrep.AgentInfo, hrep.AuthMethods
	rep.Findings = slices.Concat(rep.Findings, vrep.Findings, hrep.Findings)
	rep.Missing = slices.Concat(rep.Missing, vrep.Missing, hrep.Missing)
	rep.versionFromInitialize(res.Name)
	rep.learnSignIn(init, probe)
	rep.learnModels(init, doctorProvider(p, c.Options), probe)
	return rep
}

// versionFromInitialize takes the version the agent gave in its
// initialize answer when its version flag printed none: some agents
// (claude-agent-acp) have no such flag, and a version known is not
// "printed no version".
func (r *DoctorReport) versionFromInitialize(name string) {
	if r.Version != "" || r.AgentInfo == nil || r.AgentInfo.Version == "" {
		return
	}
	r.Version = r.AgentInfo.Version
	for i, f := range r.Findings {
		if f.Check == "version" && f.Status != FindingOK {
			r.Findings[i] = Finding{Check: "version", Status: FindingOK, Message: fmt.Sprintf("%s %s, from its initialize answer", name, r.Version)}
		}
	}
}

// handshake starts the program in ACP mode and asks initialize; it reports
// the answer (nil when there was none) and ends the program.
func (r *DoctorReport) handshake(ctx context.Context, cmd *acpclient.CommandTransport, p *Profile, res Resolution, timeout time.Duration) *acpclient.InitializeResponse {
	cmd.StopTimeout, cmd.KillTimeout = 500*time.Millisecond, 500*time.Millisecond
	conn, err := acpclient.Connect(ctx, cmd, doctorClient{}, nil)
	if err != nil {
		r.add("acp", FindingFail, "starting %s %s: %v", res.Path, strings.Join(cmd.Args, " "), err)
		r.Missing = append(r.Missing, fmt.Sprintf("%s must start in ACP mode: see the acp finding", p.Title))
		return nil
	}
	defer func() {
		conn.Close()
		<-conn.Done()
	}()
	init, err := conn.Initialize(ctx, &acpclient.InitializeRequest{ClientInfo: &acpclient.Implementation{Name: "acphost-doctor", Version: "0.1.0"}})
	if err != nil && ctx.Err() != nil {
		r.addTimeout("acp", "initialize of "+res.Path+" "+strings.Join(cmd.Args, " "), timeout)
		r.Missing = append(r.Missing, fmt.Sprintf("%s did not answer initialize within %v: check again when the machine is less busy, or allow longer", p.Title, timeout))
		return nil
	}
	if err != nil {
		r.add("acp", FindingFail, "%s %s did not answer initialize: %v", res.Path, strings.Join(cmd.Args, " "), err)
		r.Missing = append(r.Missing, fmt.Sprintf("a version of %s with ACP support", p.Title))
		return nil
	}
	r.ACP, r.AgentInfo, r.AuthMethods = true, init.AgentInfo, init.AuthMethods
	name := res.Name
	if init.AgentInfo != nil {
		name = init.AgentInfo.Name + " " + init.AgentInfo.Version
	}
	r.add("acp", FindingOK, "%s answers initialize (protocol %d)", name, init.ProtocolVersion)
	return init
}

func authIDs(methods []acpclient.AuthMethod) []string {
	var ids []string
	for _, m := range methods {
		id := m.ID
		if m.Type != "" {
			id += " (" + m.Type + ")"
		}
		ids = append(ids, id)
	}
	return ids
}

var versionPattern = regexp.MustCompile(`\bv?(\d+\.\d+\.\d+[0-9A-Za-z.+-]*)`)

// version runs the program's version flag directly (no shell) as a helper
// command (acpclient.CommandTransport.Output: its group ends with it) and
// records the first version number it prints (stdout or stderr).
func (r *DoctorReport) version(ctx context.Context, t *acpclient.CommandTransport, p *Profile, name string, timeout time.Duration) {
	args := p.VersionArgs
	if args == nil {
		args = []string{"--version"}
	}
	out, _ := helperCommand(t, args).CombinedOutput(ctx)
	if m := versionPattern.FindSubmatch(out); m != nil {
		r.Version = string(m[1])
		r.add("version", FindingOK, "%s %s", name, r.Version)
		return
	}
	if ctx.Err() != nil {
		r.addTimeout("version", name+" "+strings.Join(args, " "), timeout)
		return
	}
	r.add("version", FindingWarn, "%s printed no version", name)
}

// helperCommand is the agent's program with other arguments, run with the
// agent's directory and environment.
func helperCommand(t *acpclient.CommandTransport, args []string) *acpclient.CommandTransport {
	return &acpclient.CommandTransport{Path: t.Path, Args: args, Dir: t.Dir, Env: t.Env, Redactor: t.Redactor, Logger: t.Logger}
}

// doctorClient serves the few calls an agent may make during initialize.
type doctorClient struct{}

func (doctorClient) SessionUpdate(context.Context, *acpclient.SessionNotification) {}
func (doctorClient) RequestPermission(_ context.Context, _ *acpclient.RequestPermissionRequest, reply func(*acpclient.RequestPermissionResponse, error)) {
	reply(acpclient.PermissionCancelled(), nil)
}

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
