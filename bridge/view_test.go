package bridge

import (
	"reflect"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
)

func rows(v *SessionView) string {
	var out []string
	for _, r := range v.Tools {
		out = append(out, r.Tool.ID+"@"+string(rune('0'+r.Turn))+":"+r.Tool.Status)
	}
	return strings.Join(out, " ")
}

func pendingIDs(pending []PendingRequest) string {
	var out []string
	for _, p := range pending {
		out = append(out, p.Type+":"+p.ID)
	}
	return strings.Join(out, " ")
}

// TestSessionViewFolds builds a view from constructed events: rows belong
// to their turn (a reused id in a new turn is a new row), finished rows of
// earlier turns go at the next turn, open ones stay, late updates reach the
// newest row of their id; pending requests keep arrival order and leave on
// their decision or with their turn; the busy flag, modes, title, usage and
// config follow their events.
func TestSessionViewFolds(t *testing.T) {
	modes := &acpclient.ModeState{CurrentModeID: "ask", AvailableModes: []acpclient.Mode{{ID: "ask"}, {ID: "code"}}}
	perm1 := &PermissionRequest{ID: "p1"}
	perm2 := &PermissionRequest{ID: "p2"}
	question := &ElicitationRequest{ID: "e1"}
	tool := func(kind Kind, turn uint64, id, status string) Event {
		return Event{Kind: kind, Turn: turn, Tool: &ToolCall{ID: id, Status: status}}
	}
	var v SessionView
	apply := func(events ...Event) {
		for _, ev := range events {
			ev.Bridge, ev.Key = "a", "k"
			if ev.Session == "" {
				ev.Session = "native-1"
			}
			v.Apply(ev)
		}
	}
	apply(Event{Kind: KindSession, SessionReady: &SessionReady{AgentModes: modes,
		ConfigOptions: []acpclient.ConfigOption{{ID: "effort"}}}})
	apply(Event{Kind: KindTurnStart, Turn: 1},
		tool(KindToolStart, 1, "call_1", "pending"),
		Event{Kind: KindPermission, Turn: 1, Permission: perm1},
		Event{Kind: KindElicitation, Turn: 1, Elicitation: question},
		Event{Kind: KindPermission, Turn: 1, Permission: perm2},
		tool(KindToolUpdate, 1, "call_1", "in_progress"),
		tool(KindToolStart, 1, "call_2", "pending"),
		tool(KindToolStart, 1, "call_3", "in_progress"),
		Event{Kind: KindDecision, Turn: 1, Decision: &Decision{Request: "p1", Type: "permission", Outcome: "allowed", By: "app"}})
	if !v.Busy || v.Turn != 1 {
		t.Fatalf("during turn 1: busy %v turn %d", v.Busy, v.Turn)
	}
	if got := pendingIDs(v.Pending); got != "elicitation:e1 permission:p2" {
		t.Fatalf("pending %q: want arrival order without the decided one", got)
	}
	if v.Pending[1].Permission != perm2 {
		t.Error("the pending entry does not carry the live request")
	}
	apply(tool(KindToolEnd, 1, "call_1", "completed"),
		tool(KindToolEnd, 1, "call_2", ToolUnfinished),
		Event{Kind: KindTurnEnd, Turn: 1, StopReason: "end_turn"})
	if v.Busy || len(v.Pending) != 0 {
		t.Fatalf("after turn 1: busy %v pending %q", v.Busy, pendingIDs(v.Pending))
	}
	if got := rows(&v); got != "call_1@1:completed call_2@1:unfinished call_3@1:in_progress" {
		t.Fatalf("rows after turn 1: %s", got)
	}
	apply(Event{Kind: KindTurnStart, Turn: 2},
		tool(KindToolStart, 2, "call_1", "pending"),
		Event{Kind: KindAgentMode, Turn: 2, AgentMode: "code"},
		Event{Kind: KindSessionInfo, Turn: 2, SessionInfo: &SessionInfo{Title: "Fix the bug", TitleChanged: true}},
		Event{Kind: KindUsage, Turn: 2, Usage: &Usage{Known: true, Used: 10, Size: 100}},
		Event{Kind: KindConfig, Turn: 2, ConfigOptions: []acpclient.ConfigOption{{ID: "effort"}, {ID: "model"}}},
		Event{Kind: KindTurnEnd, Turn: 2, StopReason: "end_turn"})
	late := tool(KindToolUpdate, 0, "call_1", "completed")
	late.Late = true
	apply(late)
	if got := rows(&v); got != "call_3@1:in_progress call_1@2:completed" {
		t.Fatalf("rows after turn 2 and a late update: %s", got)
	}
	if v.AgentMode != "code" || v.AgentModes.CurrentModeID != "code" || modes.CurrentModeID != "ask" {
		t.Errorf("mode %q / %q, event's state %q: want code, code, and the event untouched",
			v.AgentMode, v.AgentModes.CurrentModeID, modes.CurrentModeID)
	}
	if v.Title != "Fix the bug" || v.Usage.Used != 10 || len(v.ConfigOptions) != 2 || v.Turn != 2 || v.Busy {
		t.Errorf("title %q usage %+v config %d turn %d busy %v", v.Title, v.Usage, len(v.ConfigOptions), v.Turn, v.Busy)
	}
	apply(Event{Kind: KindSession, Session: "native-2", SessionReady: &SessionReady{}})
	if v.Session != "native-2" || v.Key != "k" || v.Bridge != "a" {
		t.Errorf("identity after a new native id: %s %s %s", v.Key, v.Bridge, v.Session)
	}
}

// TestSnapshotKeepsAgentWideRequestsAndCopies: a sign-in outside any
// session is in Snapshot.Pending until its decision, and a snapshot does
// not change as later events are folded.
func TestSnapshotKeepsAgentWideRequestsAndCopies(t *testing.T) {
	views := newLiveViews()
	auth := &AuthRequest{ID: "auth-1"}
	views.apply([]Event{
		{Pos: 1, Bridge: "a", Kind: KindAuthRequired, Auth: auth},
		{Pos: 2, Bridge: "a", Key: "k2", Kind: KindTurnStart, Turn: 1},
		{Pos: 3, Bridge: "a", Key: "k1", Kind: KindToolStart, Tool: &ToolCall{ID: "t", Status: "pending"}},
	})
	snap := views.snapshot()
	if snap.Pos != 3 || len(snap.Pending) != 1 || snap.Pending[0].Auth != auth {
		t.Fatalf("snapshot pos %d pending %q", snap.Pos, pendingIDs(snap.Pending))
	}
	if keys := []string{snap.Sessions[0].Key, snap.Sessions[1].Key}; !reflect.DeepEqual(keys, []string{"k2", "k1"}) {
		t.Errorf("sessions in order %v, want the order of their first event", keys)
	}
	views.apply([]Event{
		{Pos: 4, Bridge: "a", Kind: KindDecision, Decision: &Decision{Request: "auth-1", Type: "auth", Outcome: "declined", By: "app"}},
		{Pos: 5, Bridge: "a", Key: "k1", Kind: KindToolUpdate, Tool: &ToolCall{ID: "t", Status: "completed"}},
	})
	if len(snap.Pending) != 1 || snap.Sessions[1].Tools[0].Tool.Status != "pending" {
		t.Error("an earlier snapshot changed")
	}
	if later := views.snapshot(); len(later.Pending) != 0 || later.Sessions[1].Tools[0].Tool.Status != "completed" {
		t.Errorf("later snapshot: pending %q, row %s", pendingIDs(later.Pending), later.Sessions[1].Tools[0].Tool.Status)
	}
}
