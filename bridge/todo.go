package bridge

import "encoding/json"

// Todo is one entry of an agent's task list, rebuilt from its task tools.
// Task keeps the agent's complete task record (ids, owner, project,
// metadata, dependency edges, timestamps) for hosts that show more than the
// common fields.
type Todo struct {
	ID          string   `json:"id,omitempty"`
	Number      int      `json:"number,omitempty"` // the session-local display number
	Content     string   `json:"content"`
	Description string   `json:"description,omitempty"`
	Status      string   `json:"status"` // pending, in_progress, completed
	ActiveForm  string   `json:"activeForm,omitempty"`
	Owner       string   `json:"owner,omitempty"`
	Blocks      []string `json:"blocks,omitempty"`
	BlockedBy   []string `json:"blockedBy,omitempty"`
	CreatedAt   string   `json:"createdAt,omitempty"`
	UpdatedAt   string   `json:"updatedAt,omitempty"`
	// Task is the agent's full record of the task, when it sent one.
	Task json.RawMessage `json:"task,omitempty"`
}
