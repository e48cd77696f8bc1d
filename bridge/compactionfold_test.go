package bridge

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
)

// TestCompactionSummaryChunks: the bridge declares compaction, and folds
// compaction_summary_chunk text into the summary its compaction's events
// carry, with the draft's patch rules, a bound, and non-text chunks passed
// on whole.
func TestCompactionSummaryChunks(t *testing.T) {
	big := strings.Repeat("é", foldedTextLimit) // 2 MiB of text, 2 bytes a character
	updates := []string{
		`{"sessionUpdate":"compaction_update","compactionId":"c1","status":"in_progress"}`,
		`{"sessionUpdate":"compaction_summary_chunk","compactionId":"c1","content":{"type":"text","text":"we "}}`,
		`{"sessionUpdate":"compaction_summary_chunk","compactionId":"c1","content":{"type":"image","data":"AAAA","mimeType":"image/png"}}`,
		`{"sessionUpdate":"compaction_summary_chunk","compactionId":"c1","content":{"type":"text","text":"did things"}}`,
		`{"sessionUpdate":"compaction_update","compactionId":"c1","status":"completed"}`,
		`{"sessionUpdate":"compaction_update","compactionId":"c2","status":"in_progress"}`,
		`{"sessionUpdate":"compaction_summary_chunk","compactionId":"c2","content":{"type":"text","text":"draft"}}`,
		`{"sessionUpdate":"compaction_update","compactionId":"c2","status":"completed","summary":[{"type":"text","text":"final"}]}`,
		`{"sessionUpdate":"compaction_update","compactionId":"c3","status":"in_progress"}`,
		`{"sessionUpdate":"compaction_summary_chunk","compactionId":"c3","content":{"type":"text","text":"` + big + `"}}`,
		`{"sessionUpdate":"compaction_summary_chunk","compactionId":"c3","content":{"type":"text","text":"more"}}`,
		`{"sessionUpdate":"compaction_update","compactionId":"c3","status":"failed","error":"boom"}`,
	}
	checkUpdatesOnWire(t, true, updates...)
	var steps []acptest.Step
	for _, u := range updates {
		steps = append(steps, update(u))
	}
	s, rec, tr := openProto(t, "cf", acptest.Script{Prompts: []acptest.Turn{{Steps: steps}}})
	var init struct {
		ClientCapabilities struct {
			Session struct {
				Compaction json.RawMessage `json:"compaction"`
			} `json:"session"`
		} `json:"clientCapabilities"`
	}
	if err := json.Unmarshal(receivedParams(t, tr, "initialize"), &init); err != nil {
		t.Fatal(err)
	}
	if string(init.ClientCapabilities.Session.Compaction) != "{}" {
		t.Errorf("initialize declares session.compaction %s, want {}", init.ClientCapabilities.Session.Compaction)
	}
	runTurn(t, s, rec)
	var got []string
	var ext []Event
	for _, ev := range rec.of("cf", s.ID()) {
		switch ev.Kind {
		case KindCompaction:
			summary := ev.Compaction.Summary
			if len(summary) > 20 {
				if len(summary) != foldedTextLimit || !strings.HasPrefix(big, summary) {
					t.Errorf("c3 summary of %d bytes, want the first %d bytes of the chunk", len(summary), foldedTextLimit)
				}
				summary = "(limit)"
			}
			got = append(got, ev.Compaction.ID+":"+ev.Compaction.Status+":"+summary+":"+ev.Compaction.Message)
		case KindExt:
			ext = append(ext, ev)
		}
	}
	want := []string{
		"c1:started::", "c1:completed:we did things:",
		"c2:started::", "c2:completed:final:",
		"c3:started::", "c3:failed:(limit):boom",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("compaction events\n%q\nwant\n%q", got, want)
	}
	if len(ext) != 1 || !strings.Contains(string(ext[0].Raw), `"image"`) {
		t.Errorf("ext events %v: the image chunk must be passed on whole", ext)
	}
}

// TestCompactionSummariesAreBounded: chunks of more compactions than the
// bridge folds at once are passed on as ext, not kept.
func TestCompactionSummariesAreBounded(t *testing.T) {
	var steps []acptest.Step
	for i := range openCompactionsKept + 1 {
		steps = append(steps, update(fmt.Sprintf(`{"sessionUpdate":"compaction_summary_chunk","compactionId":"c%d","content":{"type":"text","text":"x"}}`, i)))
	}
	s, rec, _ := openProto(t, "cb", acptest.Script{Prompts: []acptest.Turn{{Steps: steps}}})
	runTurn(t, s, rec)
	var ext []string
	for _, ev := range rec.of("cb", s.ID()) {
		if ev.Kind == KindExt {
			ext = append(ext, string(ev.Raw))
		}
	}
	if want := fmt.Sprintf(`"c%d"`, openCompactionsKept); len(ext) != 1 || !strings.Contains(ext[0], want) {
		t.Errorf("ext events %q, want only the chunk of compaction %s", ext, want)
	}
	s.mu.Lock()
	open := len(s.folds.summaries)
	s.mu.Unlock()
	if open != openCompactionsKept {
		t.Errorf("%d summaries kept, want %d", open, openCompactionsKept)
	}
}
