package acptest_test

import (
	"testing"

	"github.com/acphost/acphost/acptest"
)

// With a page size, session/list comes in pages joined by nextCursor, and
// following the cursors yields every session once.
func TestSessionListPages(t *testing.T) {
	c := start(t, acptest.Script{
		LoadSession: acptest.LoadSessionScript{Sessions: []string{"s1", "s2", "s3"}},
		SessionList: acptest.SessionListScript{PageSize: 2},
	})
	var ids []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatalf("no end of pages after %v", ids)
		}
		var page struct {
			Sessions []struct {
				SessionID string `json:"sessionId"`
			} `json:"sessions"`
			NextCursor string `json:"nextCursor"`
		}
		c.result(c.call("session/list", `{"cursor":"`+cursor+`"}`), &page)
		for _, s := range page.Sessions {
			ids = append(ids, s.SessionID)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if len(ids) != 3 || ids[0] != "s1" || ids[1] != "s2" || ids[2] != "s3" {
		t.Fatalf("listed %v, want s1 s2 s3", ids)
	}
}
