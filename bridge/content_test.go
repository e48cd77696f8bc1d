package bridge

import (
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// TestMessageContentIsTyped: images, audio, resources and resource links
// in agent, thought and user chunks arrive typed on the message events,
// their data bounded; content of an unknown type is passed on whole as
// ext; the session goes on.
func TestMessageContentIsTyped(t *testing.T) {
	const png = "iVBORw0KGgo="
	updates := []string{
		`{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"image","data":"` + png + `","mimeType":"image/png"}}`,
		`{"sessionUpdate":"agent_thought_chunk","content":{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}}`,
		`{"sessionUpdate":"user_message_chunk","content":{"type":"resource_link","uri":"file:///w/a.go","name":"a.go","size":12}}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"resource","resource":{"uri":"file:///w/b.go","mimeType":"text/x-go","text":"package b"}}}`,
	}
	checkUpdatesOnWire(t, true, updates...)
	huge := strings.Repeat("A", 50<<20)
	bigImage := `{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"` + huge + `","mimeType":"image/png","uri":"file:///w/shot.png"}}`
	unknown := `{"sessionUpdate":"agent_message_chunk","content":{"type":"video","url":"file:///w/a.mp4"}}`
	checkUpdatesOnWire(t, false, unknown)
	var steps []acptest.Step
	for _, u := range append(updates, bigImage, unknown) {
		steps = append(steps, update(u))
	}
	steps = append(steps, acptest.Step{Text: "still here"})
	s, rec, _ := openProto(t, "ct", acptest.Script{Prompts: []acptest.Turn{{Steps: steps}}})
	runTurn(t, s, rec)

	var got []Event
	for _, ev := range rec.of("ct", s.ID()) {
		switch ev.Kind {
		case KindText, KindThinking, KindUserText, KindExt:
			got = append(got, ev)
		}
	}
	if len(got) != 7 {
		t.Fatalf("got %d message events, want 7:%s", len(got), rec.summary())
	}
	check := func(i int, kind Kind, typ string, ok func(*acpclient.ContentBlock) bool) {
		t.Helper()
		ev := got[i]
		if ev.Kind != kind || ev.Content == nil || ev.Content.Type != typ || ev.Text != "" || !ok(ev.Content) {
			t.Errorf("event %d: %s %+v, want %s content of type %s", i, ev.Kind, ev.Content, kind, typ)
		}
	}
	check(0, KindText, acpclient.ContentImage, func(b *acpclient.ContentBlock) bool { return b.Data == png && b.MimeType == "image/png" })
	if got[0].MessageID != "m1" {
		t.Errorf("image chunk lost its message id: %+v", got[0])
	}
	check(1, KindThinking, acpclient.ContentAudio, func(b *acpclient.ContentBlock) bool { return b.Data == "UklGRg==" })
	check(2, KindUserText, acpclient.ContentResourceLink, func(b *acpclient.ContentBlock) bool { return b.URI == "file:///w/a.go" && *b.Size == 12 })
	check(3, KindText, acpclient.ContentResource, func(b *acpclient.ContentBlock) bool {
		return b.Resource.URI == "file:///w/b.go" && *b.Resource.Text == "package b"
	})
	check(4, KindText, acpclient.ContentImage, func(b *acpclient.ContentBlock) bool { return b.Data == "" && b.URI == "file:///w/shot.png" })
	if got[4].ContentDropped != len(huge) {
		t.Errorf("50 MiB image: ContentDropped %d, want %d", got[4].ContentDropped, len(huge))
	}
	if got[5].Kind != KindExt || !strings.Contains(string(got[5].Raw), `"video"`) {
		t.Errorf("unknown content: %s %s, want ext with it whole", got[5].Kind, got[5].Raw)
	}
	if got[6].Kind != KindText || got[6].Text != "still here" || got[6].Content != nil {
		t.Errorf("after the content: %+v", got[6])
	}
	for i, ev := range got[:4] {
		if ev.ContentDropped != 0 {
			t.Errorf("event %d dropped %d bytes of small content", i, ev.ContentDropped)
		}
	}
}

// TestBoundedContentDropsLargeResources: an embedded resource over the
// limit loses its text or blob, and the block given is not changed.
func TestBoundedContentDropsLargeResources(t *testing.T) {
	big, small := strings.Repeat("x", contentDataLimit+1), "ok"
	in := acpclient.ContentBlock{Type: acpclient.ContentResource, Resource: &acpclient.ResourceContents{URI: "file:///w/big", Text: &big, Blob: &small}}
	out, dropped := boundedContent(in)
	if dropped != len(big) || out.Resource.Text != nil || out.Resource.Blob == nil || *out.Resource.Blob != "ok" {
		t.Errorf("bounded %+v, dropped %d", out.Resource, dropped)
	}
	if in.Resource.Text != &big {
		t.Errorf("boundedContent changed the block it was given")
	}
}
