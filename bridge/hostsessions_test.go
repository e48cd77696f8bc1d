package bridge

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// Host.Sessions asks every running agent for its session/list and merges
// the answers with the journal and the open sessions: two agents that hand
// out the same native id keep their entries apart, a stopped agent is not
// started to be asked, and an agent whose list fails is named in the error
// while the others' entries are still returned.
func TestHostSessionsIncludesWhatAgentsList(t *testing.T) {
	both := acptest.Script{LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_same", "sess_only_a"}}}
	other := acptest.Script{LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_same"}}}
	j := newLifeJournal()
	// The journal knows sess_same of agent a under key ka; agent b's
	// sess_same is another session.
	j.SaveSession(ctxT(t), "ka", Record{Key: "ka", Bridge: "a", NativeSessionID: "sess_same"})
	h, _ := newHostAndRecorder(t, &HostOptions{Journal: j})
	ta, tb := &acptest.Transport{Script: both}, &acptest.Transport{Script: other}
	broken := &acptest.Transport{Script: acptest.Script{Methods: map[string]acptest.Reply{
		"session/list": {Error: &acptest.Error{Code: -32603, Message: "list broke"}}}}}
	for id, tr := range map[string]*acptest.Transport{"a": ta, "b": tb, "c": broken} {
		if _, err := h.Start(ctxT(t), Config{ID: id, Transport: tr}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := h.Sessions(ctxT(t))
	// Agent c's list failed: the others' entries and the journal's still
	// come, with an error naming c alone.
	var ce *acpclient.CallError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "bridge c") || strings.Contains(err.Error(), "bridge a") || strings.Contains(err.Error(), "bridge b") {
		t.Errorf("Sessions error %v, want agent c's session/list failure, naming c only", err)
	}
	type row struct {
		Bridge, Key, Native    string
		Journaled, AgentListed bool
	}
	var got []row
	for _, e := range list {
		got = append(got, row{e.Bridge, e.Key, e.NativeID, e.Journaled, e.AgentListed})
	}
	slices.SortFunc(got, func(x, y row) int { return strings.Compare(x.Bridge+x.Native, y.Bridge+y.Native) })
	want := []row{
		{"a", "", "sess_only_a", false, true},
		{"a", "ka", "sess_same", true, true},
		{"b", "", "sess_same", false, true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Host.Sessions rows\n %v\nwant\n %v", got, want)
	}
	for _, tr := range []*acptest.Transport{ta, tb, broken} {
		if n := countMethod(tr, "session/list"); n != 1 {
			t.Errorf("an agent got %d session/list, want 1", n)
		}
	}
}

// countMethod counts the requests of one method the transport's agents got.
func countMethod(tr *acptest.Transport, method string) int {
	n := 0
	for _, a := range tr.Agents() {
		for _, m := range a.Received() {
			if m.Method == method {
				n++
			}
		}
	}
	return n
}
