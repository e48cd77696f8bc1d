package bridge

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/acphost/acphost/acpclient"
)

// DefaultDoctorTimeout bounds each provider's checks in Doctor.
const DefaultDoctorTimeout = 20 * time.Second

// DoctorCheck is one configured provider for Doctor to examine.
type DoctorCheck struct {
	Profile *Profile
	Options LaunchOptions
	// Timeout bounds the version probe and the handshake together
	// (default DefaultDoctorTimeout).
	Timeout time.Duration
}

// Finding statuses.
const (
	FindingOK   = "ok"
	FindingWarn = "warn"
	FindingFail = "fail"
)

// Finding is one result of a doctor check.
type Finding struct {
	// Check names what was checked: "binary", "version", "acp", "auth",
	// "models".
	Check   string `json:"check"`
	Status  string `json:"status"`
	Message string `json:"message"`
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

// Doctor checks each provider: where its binary is, its version, whether it
// starts in ACP mode and answers initialize, which sign-in methods it
// offers, and what it tells without a session: the models it lists and
// whether the user is signed in (its status command's word when the
// profile has one, else what the initialize answer's methods allow to
// tell). The checks run concurrently; reports come back in the order of
// checks. Doctor starts the agents it checks and ends them before it
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
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultDoctorTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd, res, err := p.Command(ctx, c.Options)
	if err != nil {
		rep.add("binary", FindingFail, "%v", err)
		rep.Missing = append(rep.Missing, fmt.Sprintf("install %s (%s) or set its path", p.Title, strings.Join(p.Binaries, " or ")))
		return rep
	}
	rep.Binary = &res
	rep.add("binary", FindingOK, "%s found in %s (%s)", res.Name, res.Source, res.Path)

	rep.Version = probeVersion(ctx, cmd, p)
	if rep.Version != "" {
		rep.add("version", FindingOK, "%s %s", res.Name, rep.Version)
	} else {
		rep.add("version", FindingWarn, "%s printed no version", res.Name)
	}
	probe := probeStatus(ctx, cmd, p, res.Name)

	init := rep.handshake(ctx, cmd, p, res)
	rep.learnSignIn(init, probe)
	rep.learnModels(init, doctorProvider(p, c.Options), probe)
	return rep
}

// handshake starts the program in ACP mode and asks initialize; it reports
// the answer (nil when there was none) and ends the program.
func (r *DoctorReport) handshake(ctx context.Context, cmd *acpclient.CommandTransport, p *Profile, res Resolution) *acpclient.InitializeResponse {
	cmd.StopTimeout, cmd.KillTimeout = 500*time.Millisecond, 500*time.Millisecond
	conn, err := acpclient.Connect(ctx, cmd, doctorClient{}, nil)
	if err != nil {
		r.add("acp", FindingFail, "starting %s %s: %v", res.Path, strings.Join(cmd.Args, " "), err)
		r.Missing = append(r.Missing, "a "+p.Title+" that starts")
		return nil
	}
	defer func() {
		conn.Close()
		<-conn.Done()
	}()
	init, err := conn.Initialize(ctx, &acpclient.InitializeRequest{ClientInfo: &acpclient.Implementation{Name: "acphost-doctor", Version: "0.1.0"}})
	if err != nil {
		r.add("acp", FindingFail, "%s %s did not answer initialize: %v", res.Path, strings.Join(cmd.Args, " "), err)
		r.Missing = append(r.Missing, "a "+p.Title+" version with ACP support")
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

// probeVersion runs the program's version flag directly (no shell) and
// returns the first version number it prints.
func probeVersion(ctx context.Context, t *acpclient.CommandTransport, p *Profile) string {
	args := p.VersionArgs
	if args == nil {
		args = []string{"--version"}
	}
	cmd := exec.CommandContext(ctx, t.Path, args...)
	cmd.Env, cmd.Dir = t.Env, t.Dir
	cmd.WaitDelay = 200 * time.Millisecond
	out, _ := cmd.CombinedOutput()
	if m := versionPattern.FindSubmatch(out); m != nil {
		return string(m[1])
	}
	return ""
}

// doctorClient serves the few calls an agent may make during initialize.
type doctorClient struct{}

func (doctorClient) SessionUpdate(context.Context, *acpclient.SessionNotification) {}
func (doctorClient) RequestPermission(_ context.Context, _ *acpclient.RequestPermissionRequest, reply func(*acpclient.RequestPermissionResponse, error)) {
	reply(acpclient.PermissionCancelled(), nil)
}
