package acpclient

import "encoding/json"

// Draft plan update kinds: sent only to a client that declares
// ClientCapabilities.Plan.
const (
	UpdatePlanContent = "plan_update"  // unstable
	UpdatePlanRemoved = "plan_removed" // unstable
)

// PlanContentUpdate (unstable, "plan_update") replaces one of the agent's
// plans, named by its id, or adds it. Unlike the stable PlanUpdate, an agent
// may keep several plans and send each as entries, a file or markdown.
type PlanContentUpdate struct {
	Plan PlanContent     `json:"plan"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// PlanContent is one plan of the draft plan updates. Type says which
// fields hold it: "items" (Entries, the whole list), "file" (URI) or
// "markdown" (Content). A plan of another type keeps its JSON in Raw.
type PlanContent struct {
	Type    string          `json:"type"`
	PlanID  string          `json:"planId"`
	Entries []PlanEntry     `json:"entries,omitempty"`
	URI     string          `json:"uri,omitempty"`
	Content string          `json:"content,omitempty"`
	Meta    json.RawMessage `json:"_meta,omitempty"`

	Raw json.RawMessage `json:"-"`
}

// PlanRemoved (unstable, "plan_removed") removes the plan with PlanID.
type PlanRemoved struct {
	PlanID string          `json:"planId"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

type planContentFields PlanContent

// UnmarshalJSON decodes a plan; one of an unknown type keeps its JSON.
func (p *PlanContent) UnmarshalJSON(data []byte) error {
	var f planContentFields
	if err := lenientUnmarshal(data, &f); err != nil {
		return err
	}
	*p = PlanContent(f)
	switch p.Type {
	case "items", "file", "markdown":
	default:
		p.Raw = append(json.RawMessage(nil), data...)
	}
	return nil
}

// MarshalJSON writes the fields of the plan's type, entries always present
// for "items".
func (p PlanContent) MarshalJSON() ([]byte, error) {
	switch p.Type {
	case "items":
		if p.Entries == nil {
			p.Entries = []PlanEntry{}
		}
		return json.Marshal(struct {
			Type    string          `json:"type"`
			PlanID  string          `json:"planId"`
			Entries []PlanEntry     `json:"entries"`
			Meta    json.RawMessage `json:"_meta,omitempty"`
		}{p.Type, p.PlanID, p.Entries, p.Meta})
	case "file", "markdown":
		return json.Marshal(planContentFields(p))
	}
	if len(p.Raw) > 0 {
		return p.Raw, nil
	}
	return json.Marshal(planContentFields(p))
}

// Kind methods.
func (*PlanContentUpdate) Kind() string { return UpdatePlanContent }
func (*PlanRemoved) Kind() string       { return UpdatePlanRemoved }

// MarshalJSON encodes the update with its discriminator.
func (u *PlanContentUpdate) MarshalJSON() ([]byte, error) {
	type fields PlanContentUpdate
	return marshalUpdate(u.Kind(), (*fields)(u))
}

// MarshalJSON encodes the update with its discriminator.
func (u *PlanRemoved) MarshalJSON() ([]byte, error) {
	type fields PlanRemoved
	return marshalUpdate(u.Kind(), (*fields)(u))
}
