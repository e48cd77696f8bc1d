package bridge

import (
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
)

// TestAgentNotice: the draft's notice update arrives as a typed notice
// event; one without a title is passed on as ext; the session goes on.
func TestAgentNotice(t *testing.T) {
	valid := []string{
		`{"sessionUpdate":"notice","severity":"warning","title":"Rate limited","description":"Retrying in 30s"}`,
		`{"sessionUpdate":"notice","severity":"_vendor_hint","title":"Tip","_meta":{"x":1}}`,
	}
	untitled := `{"sessionUpdate":"notice","severity":"info","title":""}`
	checkUpdatesOnWire(t, true, valid...)
	checkUpdatesOnWire(t, false, untitled)
	s, rec, _ := openProto(t, "nt", acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		update(valid[0]), update(valid[1]), update(untitled), {Text: "still here"},
	}}}})
	runTurn(t, s, rec)
	var got []string
	for _, ev := range rec.of("nt", s.ID()) {
		switch {
		case ev.Kind == KindNotice && ev.Notice != nil:
			got = append(got, ev.Notice.Severity+"|"+ev.Notice.Title+"|"+ev.Notice.Description+"|"+ev.Text+"|"+string(ev.Notice.Meta))
		case ev.Kind == KindNotice:
			t.Errorf("notice event without Notice: %+v", ev)
		case ev.Kind == KindExt:
			got = append(got, "ext "+string(ev.Raw))
		case ev.Kind == KindText:
			got = append(got, "text "+ev.Text)
		}
	}
	want := []string{
		"warning|Rate limited|Retrying in 30s|Rate limited|",
		`_vendor_hint|Tip||Tip|{"x":1}`,
		"ext " + untitled,
		"text still here",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
