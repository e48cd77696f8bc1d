package bridge

import (
	"errors"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
)

// Mode tables of made-up agents, shaped like the real ones: one with plan
// and asking modes and two ruled options, one without a plan mode, one
// without an asking mode.
var (
	fullTable = &ModeTable{Asking: "default", Plan: "plan", Safe: []string{"review"},
		Auto: []string{"acceptEdits", "bypassPermissions"},
		Options: []OptionRule{
			{ID: "allow_all", Auto: []string{"true"}},
			{ID: "approval", Asking: "ask", Plan: "read-only", Auto: []string{"never"}},
		}, Source: "test: full"}
	noPlanTable   = &ModeTable{Asking: "default", Auto: []string{"auto"}, Source: "test: no plan"}
	noAskingTable = &ModeTable{Safe: []string{"normal"}, Auto: []string{"yolo"}, Source: "test: no asking"}
)

func boolOption(id string, v bool) acpclient.ConfigOption {
	return acpclient.ConfigOption{ID: id, Name: id, Type: acpclient.ConfigBoolean, BoolValue: v}
}

func selectOption(id, v string, values ...string) acpclient.ConfigOption {
	o := acpclient.ConfigOption{ID: id, Name: id, Type: acpclient.ConfigSelect, Value: v}
	for _, value := range values {
		o.Options = append(o.Options, acpclient.SelectOption{Value: value, Name: value})
	}
	return o
}

func policyOf(m Mode) Policy { return Policy{Mode: m} }

// TestJudgeAuthority: the state for each kind of mode, option and flag
// under each host mode; only a table that exists blocks, and only outside
// Full; unknown only under a Strict policy; autonomous in Build until the
// app consents.
func TestJudgeAuthority(t *testing.T) {
	approval := func(v string) []acpclient.ConfigOption {
		return []acpclient.ConfigOption{selectOption("approval", v, "ask", "read-only", "never")}
	}
	cases := []struct {
		name    string
		in      authorityInput
		state   Authority
		blocked bool
		reason  string
	}{
		{"no table", authorityInput{policy: policyOf(ModeAsk), mode: "acceptEdits"}, AuthorityUnknown, false, "no mode table for this agent"},
		{"no table in full", authorityInput{policy: policyOf(ModeFull), mode: "x"}, AuthorityUnknown, false, "no mode table"},
		{"asking", authorityInput{table: fullTable, policy: policyOf(ModeAsk), mode: "default"}, AuthorityProtected, false, `agent mode "default" asks`},
		{"plan", authorityInput{table: fullTable, policy: policyOf(ModePlan), mode: "plan"}, AuthorityProtected, false, ""},
		{"safe", authorityInput{table: fullTable, policy: policyOf(ModeBuild), mode: "review"}, AuthorityProtected, false, ""},
		{"auto in build", authorityInput{table: fullTable, policy: policyOf(ModeBuild), mode: "acceptEdits"}, AuthorityAgentAutonomous, true, `agent mode "acceptEdits" acts without asking`},
		{"auto in full", authorityInput{table: fullTable, policy: policyOf(ModeFull), mode: "bypassPermissions"}, AuthorityAgentAutonomous, false, ""},
		{"auto read-only full", authorityInput{table: fullTable, policy: Policy{Mode: ModeFull, ReadOnly: true}, mode: "acceptEdits"}, AuthorityAgentAutonomous, true, ""},
		{"asking in full", authorityInput{table: fullTable, policy: policyOf(ModeFull), mode: "default"}, AuthorityProtected, false, ""},
		{"unknown mode", authorityInput{table: fullTable, policy: policyOf(ModeBuild), mode: "turbo"}, AuthorityUnknown, false, `agent mode "turbo" is not in the agent's mode table`},
		{"unknown mode in ask", authorityInput{table: fullTable, policy: policyOf(ModeAsk), mode: "turbo"}, AuthorityUnknown, false, ""},
		{"unknown mode, strict", authorityInput{table: fullTable, policy: Policy{Mode: ModeBuild, Strict: true}, mode: "turbo"}, AuthorityUnknown, true, `agent mode "turbo" is not in the agent's mode table`},
		{"unknown mode, strict full", authorityInput{table: fullTable, policy: Policy{Mode: ModeFull, Strict: true}, mode: "turbo"}, AuthorityUnknown, false, ""},
		{"unknown mode in full", authorityInput{table: fullTable, policy: policyOf(ModeFull), mode: "turbo"}, AuthorityUnknown, false, ""},
		{"no mode reported", authorityInput{table: fullTable, policy: Policy{Mode: ModeBuild, Strict: true}}, AuthorityUnknown, true, "reports no mode"},
		{"no mode, options-only table", authorityInput{table: &ModeTable{Options: fullTable.Options}, policy: policyOf(ModeBuild),
			options: []acpclient.ConfigOption{boolOption("allow_all", false)}}, AuthorityProtected, false, ""},
		{"bool option auto", authorityInput{table: fullTable, policy: policyOf(ModeAsk), mode: "default",
			options: []acpclient.ConfigOption{boolOption("allow_all", true)}}, AuthorityAgentAutonomous, true, `config option "allow_all" = "true"`},
		{"select option auto", authorityInput{table: fullTable, policy: policyOf(ModePlan), mode: "plan", options: approval("never")}, AuthorityAgentAutonomous, true, `"approval" = "never"`},
		{"select option unknown", authorityInput{table: fullTable, policy: policyOf(ModeBuild), mode: "default", options: approval("sometimes")}, AuthorityUnknown, false, ""},
		{"select option unknown, strict", authorityInput{table: fullTable, policy: Policy{Mode: ModePlan, Strict: true}, mode: "default", options: approval("sometimes")}, AuthorityUnknown, true, ""},
		{"unruled option", authorityInput{table: fullTable, policy: policyOf(ModeBuild), mode: "default",
			options: []acpclient.ConfigOption{selectOption("model", "x")}}, AuthorityProtected, false, ""},
		{"flag in full", authorityInput{table: fullTable, policy: policyOf(ModeFull), mode: "default", flag: "--yolo"}, AuthorityAgentAutonomous, false, `launch flag "--yolo"`},
		{"flag in build", authorityInput{table: fullTable, policy: policyOf(ModeBuild), mode: "default", flag: "--yolo"}, AuthorityAgentAutonomous, true, ""},
		{"flag in build, consented", authorityInput{table: fullTable, policy: policyOf(ModeBuild), mode: "default", flag: "--yolo", consented: true}, AuthorityAgentAutonomous, false, "the app consented"},
		{"flag in ask, consented", authorityInput{table: fullTable, policy: policyOf(ModeAsk), mode: "default", flag: "--yolo", consented: true}, AuthorityAgentAutonomous, true, ""},
		{"auto in build, consented", authorityInput{table: noAskingTable, policy: policyOf(ModeBuild), mode: "yolo", consented: true}, AuthorityAgentAutonomous, false, `agent mode "yolo"`},
		{"auto read-only build, consented", authorityInput{table: noAskingTable, policy: Policy{Mode: ModeBuild, ReadOnly: true}, mode: "yolo", consented: true}, AuthorityAgentAutonomous, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := c.in.judge()
			if st.State != c.state || st.Blocked != c.blocked || !strings.Contains(st.Reason, c.reason) {
				t.Errorf("judge = %+v, want state %s, blocked %v, reason with %q", st, c.state, c.blocked, c.reason)
			}
			// Only host Build without read-only asks for consent.
			if want := c.blocked && c.state == AuthorityAgentAutonomous && c.in.policy.building(); st.ConsentNeeded != want {
				t.Errorf("judge = %+v, want ConsentNeeded %v", st, want)
			}
			if st.HostMode != ParseMode(string(c.in.policy.Mode)) || st.AgentMode != c.in.mode || st.Flag != c.in.flag {
				t.Errorf("judge = %+v: host mode, agent mode and flag as given", st)
			}
		})
	}
}

// TestPlanAuthorityMoves: where each host mode moves an agent, from which
// modes and values, and when it cannot.
func TestPlanAuthorityMoves(t *testing.T) {
	offered := []acpclient.Mode{{ID: "default"}, {ID: "plan"}, {ID: "review"}, {ID: "acceptEdits"}}
	cases := []struct {
		name       string
		in         authorityInput
		preferPlan bool
		want       []string // "mode:ID", "option:ID=VALUE", "!" suffix for required
		stuck      int
	}{
		{"ask: auto to plan", authorityInput{table: fullTable, policy: policyOf(ModeAsk), mode: "acceptEdits"}, false, []string{"mode:plan!"}, 0},
		{"ask: no plan, to asking", authorityInput{table: noPlanTable, policy: policyOf(ModeAsk), mode: "auto"}, false, []string{"mode:default!"}, 0},
		{"ask: asking stays", authorityInput{table: fullTable, policy: policyOf(ModeAsk), mode: "default"}, true, nil, 0},
		{"plan: auto to plan", authorityInput{table: fullTable, policy: policyOf(ModePlan), mode: "bypassPermissions"}, false, []string{"mode:plan!"}, 0},
		{"plan: asking to plan when preferred", authorityInput{table: fullTable, policy: policyOf(ModePlan), mode: "default"}, true, []string{"mode:plan"}, 0},
		{"plan: asking stays otherwise", authorityInput{table: fullTable, policy: policyOf(ModePlan), mode: "default"}, false, nil, 0},
		{"plan: plan not offered, to asking", authorityInput{table: fullTable, policy: policyOf(ModePlan), mode: "acceptEdits",
			modes: []acpclient.Mode{{ID: "default"}, {ID: "acceptEdits"}}}, true, []string{"mode:default!"}, 0},
		{"plan: no plan table, asking stays", authorityInput{table: noPlanTable, policy: policyOf(ModePlan), mode: "default"}, true, nil, 0},
		{"build: auto to asking", authorityInput{table: fullTable, policy: policyOf(ModeBuild), mode: "acceptEdits", modes: offered}, true, []string{"mode:default!"}, 0},
		{"build: safe stays", authorityInput{table: fullTable, policy: policyOf(ModeBuild), mode: "review"}, true, nil, 0},
		{"build: plan stays", authorityInput{table: fullTable, policy: policyOf(ModeBuild), mode: "plan"}, true, nil, 0},
		{"build: unknown to asking", authorityInput{table: fullTable, policy: policyOf(ModeBuild), mode: "turbo"}, false, []string{"mode:default!"}, 0},
		{"read-only full: like ask", authorityInput{table: fullTable, policy: Policy{Mode: ModeFull, ReadOnly: true}, mode: "acceptEdits"}, false, []string{"mode:plan!"}, 0},
		{"full: nothing moves", authorityInput{table: fullTable, policy: policyOf(ModeFull), mode: "bypassPermissions",
			options: []acpclient.ConfigOption{boolOption("allow_all", true)}}, true, nil, 0},
		{"no table: nothing moves", authorityInput{policy: policyOf(ModeAsk), mode: "yolo"}, true, nil, 0},
		{"no asking mode: stuck", authorityInput{table: noAskingTable, policy: policyOf(ModeBuild), mode: "yolo"}, true, nil, 1},
		{"asking mode not offered: stuck", authorityInput{table: fullTable, policy: policyOf(ModeBuild), mode: "acceptEdits",
			modes: []acpclient.Mode{{ID: "acceptEdits"}}}, false, nil, 1},
		{"bool option to false", authorityInput{table: fullTable, policy: policyOf(ModeBuild), mode: "default",
			options: []acpclient.ConfigOption{boolOption("allow_all", true)}}, false, []string{"option:allow_all=false!"}, 0},
		{"select option to plan value in ask", authorityInput{table: fullTable, policy: policyOf(ModeAsk), mode: "default",
			options: []acpclient.ConfigOption{selectOption("approval", "never", "ask", "read-only", "never")}}, false, []string{"option:approval=read-only!"}, 0},
		{"select option to asking value in build", authorityInput{table: fullTable, policy: policyOf(ModeBuild), mode: "default",
			options: []acpclient.ConfigOption{selectOption("approval", "never", "ask", "never")}}, false, []string{"option:approval=ask!"}, 0},
		{"select option without an asking value: stuck", authorityInput{table: fullTable, policy: policyOf(ModeBuild), mode: "default",
			options: []acpclient.ConfigOption{selectOption("approval", "never", "never")}}, false, nil, 1},
		{"flag: stuck", authorityInput{table: fullTable, policy: policyOf(ModeBuild), mode: "default", flag: "--yolo"}, false, nil, 1},
		{"mode and option together", authorityInput{table: fullTable, policy: policyOf(ModeBuild), mode: "acceptEdits",
			options: []acpclient.ConfigOption{boolOption("allow_all", true)}}, false, []string{"mode:default!", "option:allow_all=false!"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			moves, stuck := c.in.plan(c.preferPlan)
			var got []string
			for _, m := range moves {
				s := "mode:" + m.mode
				if m.option != nil {
					v := m.option.Value
					if m.option.Bool != nil {
						v = map[bool]string{true: "true", false: "false"}[*m.option.Bool]
					}
					s = "option:" + m.option.ConfigID + "=" + v
				}
				if m.required {
					s += "!"
				}
				got = append(got, s)
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") || len(stuck) != c.stuck {
				t.Errorf("plan = %q, stuck %v; want %q, %d stuck", got, stuck, c.want, c.stuck)
			}
		})
	}
}

// TestAuthorityErrorNamesBothModes: the refusal names the host mode and the
// agent's mode, option or flag, and is errors.Is/As-able with its cause.
func TestAuthorityErrorNamesBothModes(t *testing.T) {
	cause := errors.New("mode refused")
	st := authorityInput{table: fullTable, policy: policyOf(ModeAsk), mode: "acceptEdits"}.judge()
	err := error(st.refusal(cause))
	var ae *AuthorityError
	if !errors.As(err, &ae) || !errors.Is(err, ErrAgentAutonomous) || !errors.Is(err, cause) || errors.Is(err, ErrAgentModeUnknown) {
		t.Fatalf("refusal %v: want an *AuthorityError wrapping ErrAgentAutonomous and the cause", err)
	}
	for _, want := range []string{"host mode ask", `agent mode "acceptEdits"`, "acts without asking", "mode refused"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	unknown := authorityInput{table: fullTable, policy: Policy{Mode: ModeFull, ReadOnly: true}, mode: "turbo"}.judge().refusal(nil)
	if !errors.Is(unknown, ErrAgentModeUnknown) || !strings.Contains(unknown.Error(), "read-only tool policy") {
		t.Errorf("unknown refusal %v", unknown)
	}
	flag := refuseLaunchFlag(policyOf(ModePlan), "--approval full-access")
	if !errors.Is(flag, ErrAgentAutonomous) || !strings.Contains(flag.Error(), `launch flag "--approval full-access"`) || !strings.Contains(flag.Error(), "host mode plan") {
		t.Errorf("flag refusal %v", flag)
	}
	if err := refuseLaunchFlag(policyOf(ModeFull), "--yolo"); err != nil {
		t.Errorf("flag refused in full: %v", err)
	}
}

// TestModeTableCheck: a value listed as auto and as asking is reported.
func TestModeTableCheck(t *testing.T) {
	for _, ok := range []*ModeTable{fullTable, noPlanTable, noAskingTable} {
		if err := ok.Check(); err != nil {
			t.Errorf("%s: %v", ok.Source, err)
		}
	}
	bad := &ModeTable{Asking: "default", Auto: []string{"default"}, Options: []OptionRule{{ID: "o", Safe: []string{"x"}, Auto: []string{"x"}}}, Source: "bad"}
	err := bad.Check()
	if err == nil || !strings.Contains(err.Error(), `mode "default"`) || !strings.Contains(err.Error(), `option "o"`) {
		t.Errorf("Check = %v", err)
	}
	// A mode listed twice fails closed: it counts as auto.
	if c := bad.classifyMode("default"); c != classAuto {
		t.Errorf("a mode listed as auto and asking is class %d", c)
	}
}
