package bridge

import (
	"encoding/json"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/waitfor"
)

// TestBooleanConfigOptions: the bridge declares boolean config options,
// carries them typed through the session, config events and
// SetConfigOption, and keeps a boolean option with a value of another type
// whole in Raw instead of reading it as off.
func TestBooleanConfigOptions(t *testing.T) {
	const fastOff = `{"id":"fast","name":"Fast","type":"boolean","currentValue":false}`
	const fastOn = `{"id":"fast","name":"Fast","type":"boolean","currentValue":true}`
	const bad = `{"id":"bad","name":"Bad","type":"boolean","currentValue":"yes"}`
	checkUpdatesOnWire(t, true, `{"sessionUpdate":"config_option_update","configOptions":[`+fastOn+`]}`)
	checkUpdatesOnWire(t, false, `{"sessionUpdate":"config_option_update","configOptions":[`+bad+`]}`)
	script := acptest.Script{
		NewSession: acptest.NewSessionScript{ConfigOptions: raw(`[` + fastOff + `]`)},
		Prompts: []acptest.Turn{{Steps: []acptest.Step{
			update(`{"sessionUpdate":"config_option_update","configOptions":[` + fastOn + `,` + bad + `]}`),
			{Text: "still here"},
		}}},
	}
	s, rec, tr := openProto(t, "cb", script)

	var init struct {
		ClientCapabilities struct {
			Session struct {
				ConfigOptions struct {
					Boolean json.RawMessage `json:"boolean"`
				} `json:"configOptions"`
			} `json:"session"`
		} `json:"clientCapabilities"`
	}
	if err := json.Unmarshal(receivedParams(t, tr, "initialize"), &init); err != nil {
		t.Fatal(err)
	}
	if string(init.ClientCapabilities.Session.ConfigOptions.Boolean) != "{}" {
		t.Errorf("initialize declares configOptions.boolean %s, want {}", init.ClientCapabilities.Session.ConfigOptions.Boolean)
	}

	yes := true
	opts, err := s.SetConfigOption(waitfor.Context(t), acpclient.SetConfigOptionRequest{ConfigID: "fast", Bool: &yes})
	if err != nil {
		t.Fatal(err)
	}
	if len(opts) != 1 || opts[0].Type != acpclient.ConfigBoolean || !opts[0].BoolValue {
		t.Errorf("SetConfigOption returned %+v, want fast on", opts)
	}
	var set struct {
		Type  string `json:"type"`
		Value any    `json:"value"`
	}
	if err := json.Unmarshal(receivedParams(t, tr, "session/set_config_option"), &set); err != nil {
		t.Fatal(err)
	}
	if set.Type != "boolean" || set.Value != true {
		t.Errorf("set_config_option sent type %q value %v, want boolean true", set.Type, set.Value)
	}

	runTurn(t, s, rec)
	ev := rec.waitFor("the turn's config event", func(ev Event) bool { return ev.Kind == KindConfig && ev.Turn > 0 })
	if len(ev.ConfigOptions) != 2 {
		t.Fatalf("config event options %+v", ev.ConfigOptions)
	}
	if o := ev.ConfigOptions[0]; o.Type != acpclient.ConfigBoolean || !o.BoolValue || o.Raw != nil {
		t.Errorf("fast %+v, want a typed boolean that is on", o)
	}
	if o := ev.ConfigOptions[1]; o.BoolValue || string(o.Raw) != bad {
		t.Errorf("bad %+v: a string value must be kept whole in Raw, not read as a boolean", o)
	}
	if got, _ := json.Marshal(ev.ConfigOptions[1]); string(got) != bad {
		t.Errorf("bad option re-encoded as %s, want it as sent", got)
	}
	rec.waitFor("the turn's text after the malformed option", func(ev Event) bool { return ev.Kind == KindText && ev.Text == "still here" })
}
