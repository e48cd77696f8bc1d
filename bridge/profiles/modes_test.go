package profiles

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
)

// probe is one saved answer of a real agent: what its initialize said it
// was and the modes and config options its session/new offered.
type probe struct {
	Probe     string `json:"probe"`
	AgentInfo struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"agentInfo"`
	SessionNew struct {
		Modes         *acpclient.ModeState     `json:"modes"`
		ConfigOptions []acpclient.ConfigOption `json:"configOptions"`
	} `json:"sessionNew"`
}

// probeFiles are the probes of each plain profile, in testdata/.
var probeFiles = map[*bridge.Profile][]string{
	Claude:   {"claude.json", "claude-root.json"},
	Codex:    {"codex.json"},
	Gemini:   {"gemini.json"},
	OpenCode: {"opencode.json"},
	Qwen:     {"qwen.json"},
	Copilot:  {"copilot.json"},
}

func loadProbes(t *testing.T, names []string) []probe {
	t.Helper()
	var probes []probe
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		var p probe
		if err := json.Unmarshal(data, &p); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		probes = append(probes, p)
	}
	return probes
}

// harmlessCategories are config option categories that choose what the
// agent thinks with, never whether it asks, so a table need not list them.
var harmlessCategories = []string{"model", "thought_level"}

// tableProblems checks a mode table against what the agent really offered:
// every id the table names was offered, every mode and every value of a
// listed option is classified exactly once, every other option is of a
// harmless category, and Source names the probed version.
func tableProblems(table *bridge.ModeTable, probes []probe) []string {
	var problems []string
	offeredModes := map[string]bool{}
	offeredOptions := map[string]map[string]bool{}
	for _, p := range probes {
		if !strings.Contains(table.Source, p.AgentInfo.Version) {
			problems = append(problems, fmt.Sprintf("Source %q does not name the probed version %s", table.Source, p.AgentInfo.Version))
		}
		if m := p.SessionNew.Modes; m != nil {
			for _, mode := range m.AvailableModes {
				offeredModes[mode.ID] = true
			}
		}
		for _, o := range p.SessionNew.ConfigOptions {
			if offeredOptions[o.ID] == nil {
				offeredOptions[o.ID] = map[string]bool{}
			}
			for _, v := range o.Values() {
				offeredOptions[o.ID][v.Value] = true
			}
			if !slices.ContainsFunc(table.Options, func(r bridge.OptionRule) bool { return r.ID == o.ID }) &&
				!slices.Contains(harmlessCategories, o.Category) {
				problems = append(problems, fmt.Sprintf("config option %s (category %q) is not in the table", o.ID, o.Category))
			}
		}
	}
	problems = append(problems, classProblems("mode", offeredModes, table.Asking, table.Plan, table.Safe, table.Auto)...)
	for _, r := range table.Options {
		values, ok := offeredOptions[r.ID]
		if !ok {
			problems = append(problems, fmt.Sprintf("option %s was never offered", r.ID))
			continue
		}
		problems = append(problems, classProblems("option "+r.ID+" value", values, r.Asking, r.Plan, r.Safe, r.Auto)...)
	}
	return problems
}

// classProblems checks one set of offered ids against its classes.
func classProblems(what string, offered map[string]bool, asking, plan string, safe, auto []string) []string {
	var problems []string
	count := map[string]int{}
	for _, id := range slices.Concat([]string{asking, plan}, safe, auto) {
		if id == "" {
			continue
		}
		count[id]++
		if !offered[id] {
			problems = append(problems, fmt.Sprintf("%s %q is in the table but was never offered", what, id))
		}
	}
	for id := range offered {
		switch count[id] {
		case 0:
			problems = append(problems, fmt.Sprintf("%s %q was offered but is not classified", what, id))
		case 1:
		default:
			problems = append(problems, fmt.Sprintf("%s %q is classified %d times", what, id, count[id]))
		}
	}
	slices.Sort(problems)
	return problems
}

func TestModeTables(t *testing.T) {
	for p, files := range probeFiles {
		t.Run(p.Name, func(t *testing.T) {
			if p.Modes == nil {
				t.Fatal("no mode table")
			}
			for _, problem := range tableProblems(p.Modes, loadProbes(t, files)) {
				t.Error(problem)
			}
		})
	}
}

// TestModeTablesAllBuiltin: every built-in profile knows its agent's modes
// and says where it learned them.
func TestModeTablesAllBuiltin(t *testing.T) {
	for _, p := range All() {
		if p.Modes == nil || p.Modes.Source == "" {
			t.Errorf("%s: no mode table or no Source", p.Name)
		}
	}
}

// TestModeTableProblems: the check finds a table that misses what the
// agent offered or names what it did not.
func TestModeTableProblems(t *testing.T) {
	copilot := loadProbes(t, probeFiles[Copilot])
	gemini := loadProbes(t, probeFiles[Gemini])
	without := func(ids []string, id string) []string {
		return slices.DeleteFunc(slices.Clone(ids), func(s string) bool { return s == id })
	}
	tests := []struct {
		name   string
		table  func() *bridge.ModeTable
		probes []probe
		want   string
	}{
		{"auto mode left out", func() *bridge.ModeTable {
			m := *geminiModes
			m.Auto = without(m.Auto, "yolo")
			return &m
		}, gemini, `mode "yolo" was offered but is not classified`},
		{"mode never offered", func() *bridge.ModeTable {
			m := *geminiModes
			m.Auto = append(slices.Clone(m.Auto), "turbo")
			return &m
		}, gemini, `mode "turbo" is in the table but was never offered`},
		{"classified twice", func() *bridge.ModeTable {
			m := *geminiModes
			m.Safe = []string{"yolo"}
			return &m
		}, gemini, `mode "yolo" is classified 2 times`},
		{"option left out", func() *bridge.ModeTable {
			m := *copilotModes
			m.Options = m.Options[:1]
			return &m
		}, copilot, `config option allow_all (category "permissions") is not in the table`},
		{"option value left out", func() *bridge.ModeTable {
			m := *copilotModes
			m.Options = slices.Clone(m.Options)
			m.Options[1].Auto = nil
			return &m
		}, copilot, `option allow_all value "on" was offered but is not classified`},
		{"old version", func() *bridge.ModeTable {
			m := *geminiModes
			m.Source = "@google/gemini-cli 0.1.0"
			return &m
		}, gemini, "does not name the probed version 0.61.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problems := tableProblems(tt.table(), tt.probes)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tt.want) }) {
				t.Errorf("problems %q lack %q", problems, tt.want)
			}
		})
	}
}

func TestCopilotLaunchEscalation(t *testing.T) {
	tests := []struct {
		extra []string
		want  string
	}{
		{nil, ""},
		{[]string{"--allow-all-tools"}, "--allow-all-tools"},
		{[]string{"--model", "gpt-5", "--allow-all"}, "--allow-all"},
		{[]string{"--yolo"}, "--yolo"},
		{[]string{"--allow-all-paths"}, "--allow-all-paths"},
		{[]string{"--allow-tool=shell(git:*)"}, "--allow-tool=shell(git:*)"},
		{[]string{"--allow-tool", "write"}, "--allow-tool"},
		{[]string{"--allow-all-mcp-server-instructions"}, ""},
		{[]string{"--deny-tool", "shell"}, ""},
	}
	for _, tt := range tests {
		if got := Copilot.Modes.LaunchEscalation(bridge.LaunchOptions{ExtraArgs: tt.extra}); got != tt.want {
			t.Errorf("LaunchEscalation(%q) = %q, want %q", tt.extra, got, tt.want)
		}
	}
}
