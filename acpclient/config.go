package acpclient

import (
	"encoding/json"
	"errors"
)

// Config option types (ConfigOption.Type).
const (
	ConfigSelect  = "select"
	ConfigBoolean = "boolean"
)

// ConfigOption is a session setting the agent exposes (model, reasoning level,
// mode…). Select options carry Value and Options; boolean options BoolValue.
// An option of an unknown type, or whose current value is not of its type
// (a boolean option with a string value), keeps its JSON in Raw; hosts
// should skip it.
type ConfigOption struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Category    string          `json:"category,omitempty"` // mode, model, model_config, thought_level, _custom…
	Type        string          `json:"type"`
	Value       string          `json:"-"` // select: current value id
	BoolValue   bool            `json:"-"` // boolean: current value
	Options     []SelectOption  `json:"options,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`

	Raw json.RawMessage `json:"-"`
}

// SelectOption is a value of a select option, or a named group of values
// (Group set, Options holding the group's values).
type SelectOption struct {
	Value       string          `json:"value,omitempty"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Group       string          `json:"group,omitempty"`
	Options     []SelectOption  `json:"options,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// Values returns the option's selectable values, flattening groups.
func (o *ConfigOption) Values() []SelectOption {
	var out []SelectOption
	var walk func([]SelectOption)
	walk = func(opts []SelectOption) {
		for _, so := range opts {
			if so.Group != "" || (so.Value == "" && len(so.Options) > 0) {
				walk(so.Options)
				continue
			}
			out = append(out, so)
		}
	}
	walk(o.Options)
	return out
}

type configOptionFields struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	Category     string          `json:"category,omitempty"`
	Type         string          `json:"type"`
	CurrentValue json.RawMessage `json:"currentValue"`
	Options      []SelectOption  `json:"options,omitempty"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// UnmarshalJSON decodes a select or boolean option; others keep their JSON.
func (o *ConfigOption) UnmarshalJSON(data []byte) error {
	var f configOptionFields
	if err := lenientUnmarshal(data, &f); err != nil {
		return err
	}
	*o = ConfigOption{ID: f.ID, Name: f.Name, Description: f.Description, Category: f.Category,
		Type: f.Type, Options: f.Options, Meta: f.Meta}
	if o.Type == "" {
		o.Type = ConfigSelect
	}
	var err error
	switch o.Type {
	case ConfigSelect:
		err = decodeCurrentValue(f.CurrentValue, &o.Value)
	case ConfigBoolean:
		err = decodeCurrentValue(f.CurrentValue, &o.BoolValue)
	default:
		err = errUnknownOptionType
	}
	if err != nil {
		o.Raw = append(json.RawMessage(nil), data...) // kept whole, never read as false or ""
	}
	return nil
}

var errUnknownOptionType = errors.New("unknown config option type")

// decodeCurrentValue reads a current value of the option's type; a missing
// or null one leaves the zero value, one of another type is an error.
func decodeCurrentValue(raw json.RawMessage, into any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return json.Unmarshal(raw, into)
}

// MarshalJSON encodes the option with its current value.
func (o ConfigOption) MarshalJSON() ([]byte, error) {
	if len(o.Raw) > 0 {
		return o.Raw, nil
	}
	f := configOptionFields{ID: o.ID, Name: o.Name, Description: o.Description, Category: o.Category,
		Type: o.Type, Options: o.Options, Meta: o.Meta}
	var err error
	if o.Type == ConfigBoolean {
		f.CurrentValue, err = json.Marshal(o.BoolValue)
	} else {
		f.CurrentValue, err = json.Marshal(o.Value)
		if f.Options == nil {
			f.Options = []SelectOption{}
		}
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(f)
}

// ModeState is the agent's session modes and the current one.
type ModeState struct {
	CurrentModeID  string          `json:"currentModeId"`
	AvailableModes []Mode          `json:"availableModes"`
	Meta           json.RawMessage `json:"_meta,omitempty"`
}

// Mode is one session mode (e.g. "ask", "code").
type Mode struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// ModelState is the legacy (never stabilised) model list some agents still
// return from session/new and friends; see Conn.SetModel.
type ModelState struct {
	CurrentModelID  string          `json:"currentModelId"`
	AvailableModels []ModelInfo     `json:"availableModels"`
	Meta            json.RawMessage `json:"_meta,omitempty"`
}

// ModelInfo is one model of a legacy model list.
type ModelInfo struct {
	ModelID     string          `json:"modelId"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}
