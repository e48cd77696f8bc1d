package crewcoder

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
)

// todoBook rebuilds CrewCoder's task list per session from Task* tool
// results: the rawOutput.todos snapshot when there is one, enriched with
// the rawOutput.task records; otherwise from the TaskCreate, TaskUpdate and
// TaskDelete arguments and results. Only completed results count: a list is
// never made up from calls that did not happen or failed.
type todoBook struct {
	mu       sync.Mutex
	sessions map[string]*todoState
}

type todoState struct {
	order   []string
	records map[string]map[string]any // task id → full record
	shown   bool                      // a non-empty list was reported
}

func newTodoBook() *todoBook { return &todoBook{sessions: map[string]*todoState{}} }

func (b *todoBook) state(sessionID string) *todoState {
	st := b.sessions[sessionID]
	if st == nil {
		st = &todoState{records: map[string]map[string]any{}}
		b.sessions[sessionID] = st
	}
	return st
}

// clear forgets the list when a new user message starts a turn, and tells
// the host when it was showing one.
func (b *todoBook) clear(sessionID string) []bridge.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.state(sessionID)
	shown := st.shown
	*st = todoState{records: map[string]map[string]any{}}
	if !shown {
		return nil
	}
	return []bridge.Event{{Kind: bridge.KindTodos}}
}

// toolEnded reads a finished tool call and returns a todos event when it
// was a task tool that changed the list.
func (b *todoBook) toolEnded(sessionID string, call *bridge.ToolCall) []bridge.Event {
	if call.Status != acpclient.ToolStatusCompleted || !strings.HasPrefix(call.Name, "Task") {
		return nil
	}
	var in map[string]any
	_ = json.Unmarshal(call.RawInput, &in)
	var out map[string]json.RawMessage
	_ = json.Unmarshal(call.RawOutput, &out)

	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.state(sessionID)
	if call.Name == "TaskList" {
		// Project-wide lists hold other sessions' tasks: only a
		// session-only listing describes this chat.
		if only, _ := in["sessionOnly"].(bool); !only {
			return nil
		}
		var tasks []map[string]any
		if json.Unmarshal(out["tasks"], &tasks) == nil && tasks != nil {
			st.order, st.records = nil, map[string]map[string]any{}
			for _, t := range tasks {
				st.upsert(t)
			}
		}
	}
	var rec map[string]any
	if json.Unmarshal(out["task"], &rec) == nil && rec != nil {
		st.upsert(rec)
	}
	var snapshot []map[string]any
	if json.Unmarshal(out["todos"], &snapshot) == nil && snapshot != nil {
		return st.report(st.fromSnapshot(snapshot))
	}
	switch call.Name {
	case "TaskCreate":
		if rec == nil {
			created := map[string]any{}
			for k, v := range in {
				created[k] = v
			}
			for _, key := range []string{"id", "taskId"} {
				var id any
				if json.Unmarshal(out[key], &id) == nil && id != nil {
					created["id"] = id
				}
			}
			if created["status"] == nil {
				created["status"] = "pending"
			}
			st.upsert(created)
		}
	case "TaskUpdate":
		id := idString(in["taskId"])
		if r := st.records[id]; r != nil {
			for k, v := range in {
				if k != "taskId" {
					r[k] = v
				}
			}
			if r["status"] == "deleted" {
				st.remove(id)
			}
		}
	case "TaskDelete":
		st.remove(idString(in["taskId"]))
	case "TaskList":
	default:
		if rec == nil {
			return nil
		}
	}
	return st.report(st.fromRecords())
}

func (st *todoState) upsert(rec map[string]any) {
	id := idString(rec["id"])
	if id == "" {
		id = idString(rec["taskId"])
	}
	if id == "" {
		id = "subject:" + str(rec["subject"]) + str(rec["content"])
	}
	if old, ok := st.records[id]; ok {
		for k, v := range rec {
			old[k] = v
		}
		return
	}
	st.records[id] = rec
	st.order = append(st.order, id)
}

func (st *todoState) remove(id string) {
	delete(st.records, id)
	for i, o := range st.order {
		if o == id {
			st.order = append(st.order[:i], st.order[i+1:]...)
			break
		}
	}
}

func (st *todoState) fromRecords() []bridge.Todo {
	var list []bridge.Todo
	for _, id := range st.order {
		list = append(list, todoOf(st.records[id]))
	}
	return list
}

// fromSnapshot takes the authoritative snapshot and attaches each entry's
// full record, matched by id or else by subject.
func (st *todoState) fromSnapshot(snapshot []map[string]any) []bridge.Todo {
	var list []bridge.Todo
	for _, item := range snapshot {
		t := todoOf(item)
		rec := st.records[t.ID]
		if rec == nil {
			for _, id := range st.order {
				if r := st.records[id]; str(r["subject"]) == t.Content || str(r["content"]) == t.Content {
					rec = r
					break
				}
			}
		}
		if rec != nil {
			full := todoOf(rec)
			// The snapshot's list and status win; the record adds detail.
			full.Content, full.Status = t.Content, t.Status
			if t.ActiveForm != "" {
				full.ActiveForm = t.ActiveForm
			}
			t = full
		}
		list = append(list, t)
	}
	return list
}

func (st *todoState) report(list []bridge.Todo) []bridge.Event {
	st.shown = len(list) > 0
	plan := make([]acpclient.PlanEntry, 0, len(list))
	for _, t := range list {
		plan = append(plan, acpclient.PlanEntry{Content: t.Content, Priority: "medium", Status: t.Status})
	}
	return []bridge.Event{{Kind: bridge.KindTodos, Todos: list, Plan: plan}}
}

func todoOf(rec map[string]any) bridge.Todo {
	t := bridge.Todo{
		ID:          idString(rec["id"]),
		Content:     firstString(rec, "subject", "content", "title"),
		Description: str(rec["description"]),
		Status:      str(rec["status"]),
		ActiveForm:  str(rec["activeForm"]),
		Owner:       str(rec["owner"]),
		Blocks:      idList(rec["blocks"]),
		BlockedBy:   idList(rec["blockedBy"]),
		CreatedAt:   str(rec["createdAt"]),
		UpdatedAt:   str(rec["updatedAt"]),
	}
	if t.ID == "" {
		t.ID = idString(rec["taskId"])
	}
	for _, key := range []string{"displayNumber", "number"} {
		if n, ok := rec[key].(float64); ok {
			t.Number = int(n)
			break
		}
	}
	if t.Status == "" {
		t.Status = "pending"
	}
	if _, isRecord := rec["subject"]; isRecord || t.Owner != "" || t.CreatedAt != "" {
		t.Task, _ = json.Marshal(rec)
	}
	return t
}

func firstString(rec map[string]any, keys ...string) string {
	for _, k := range keys {
		if s := str(rec[k]); s != "" {
			return s
		}
	}
	return ""
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// idString reads an id sent as a string or a number.
func idString(v any) string {
	switch id := v.(type) {
	case string:
		return id
	case float64:
		return strconv.FormatFloat(id, 'f', -1, 64)
	}
	return ""
}

func idList(v any) []string {
	items, _ := v.([]any)
	var out []string
	for _, it := range items {
		if s := idString(it); s != "" {
			out = append(out, s)
		}
	}
	return out
}
