package acptest

import (
	"encoding/json"
	"strconv"
)

// SessionListScript shapes session/list, which lists the sessions created,
// loaded or resumed on the connection and those LoadSession.Sessions names,
// by id.
type SessionListScript struct {
	// PageSize, when set, splits the list into pages of this many sessions
	// joined by nextCursor, as agents with many sessions do.
	PageSize int `json:"pageSize,omitempty"`
}

// listPage answers one session/list request: the page after its cursor.
func (c *conn) listPage(params json.RawMessage) any {
	var p struct {
		Cursor string `json:"cursor"`
	}
	json.Unmarshal(params, &p)
	list := c.listSessions()
	size := c.script.SessionList.PageSize
	if size <= 0 {
		return map[string]any{"sessions": list}
	}
	start, _ := strconv.Atoi(p.Cursor)
	start = min(max(start, 0), len(list))
	end := min(start+size, len(list))
	page := map[string]any{"sessions": list[start:end]}
	if end < len(list) {
		page["nextCursor"] = strconv.Itoa(end)
	}
	return page
}
