package bridge

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/acphost/acphost/acpclient"
)

// foldedTextLimit bounds the text the bridge folds from draft updates that
// append to an earlier one (a compaction's summary chunks): past it, later
// chunks are not kept, so an agent cannot grow a session without bound.
const foldedTextLimit = 1 << 20

// openCompactionsKept bounds the compactions whose summaries the bridge
// folds at once; chunks of one more are passed on as ext.
const openCompactionsKept = 16

// foldCompaction returns the compaction a compaction_update reports, its
// summary patched as the draft says: a summary present replaces the folded
// chunks, null clears them, and one left out keeps them. A compaction that
// ended is forgotten.
func (s *Session) foldCompaction(u *acpclient.CompactionUpdate, raw json.RawMessage) *Compaction {
	c := &Compaction{ID: u.CompactionID, Status: NormalizeCompactionStatus(u.Status)}
	var patch struct {
		Summary json.RawMessage `json:"summary"`
		Error   json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(raw, &patch) // the update decoded already: this only tells null from absent
	_ = json.Unmarshal(patch.Error, &c.Message)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(patch.Summary) > 0 {
		summary := s.folds.summary(u.CompactionID)
		summary.Reset()
		for _, b := range u.Summary {
			appendLimited(summary, b.Text)
		}
	}
	if summary := s.folds.summaries[u.CompactionID]; summary != nil {
		c.Summary = summary.String()
	}
	if c.Status != CompactionStarted {
		delete(s.folds.summaries, u.CompactionID)
	}
	return c
}

// foldSummaryChunk appends a compaction_summary_chunk's text to its
// compaction's summary, which the compaction's next event carries. It
// reports false for content that is not text, and for a chunk of one
// compaction more than openCompactionsKept, which the caller passes on
// whole.
func (s *Session) foldSummaryChunk(u *acpclient.CompactionSummaryChunk) bool {
	if u.Content.Type != acpclient.ContentText {
		return false
	}
	s.mu.Lock()
	_, open := s.folds.summaries[u.CompactionID]
	if !open && len(s.folds.summaries) >= openCompactionsKept {
		s.mu.Unlock()
		return false
	}
	appendLimited(s.folds.summary(u.CompactionID), u.Content.Text)
	s.mu.Unlock()
	s.activity()
	return true
}

// summary returns the summary of compaction id, starting an empty one.
func (f *updateFolds) summary(id string) *strings.Builder {
	if f.summaries == nil {
		f.summaries = map[string]*strings.Builder{}
	}
	b := f.summaries[id]
	if b == nil {
		b = &strings.Builder{}
		f.summaries[id] = b
	}
	return b
}

// appendLimited appends text to b up to foldedTextLimit bytes in all, cut
// at a character boundary.
func appendLimited(b *strings.Builder, text string) {
	room := foldedTextLimit - b.Len()
	if room <= 0 {
		return
	}
	if len(text) > room {
		for room > 0 && !utf8.RuneStart(text[room]) {
			room--
		}
		text = text[:room]
	}
	b.WriteString(text)
}
