package bridge

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A key finds its session; a native id finds the one session that had it
// (now or earlier); one that several sessions had is refused, naming every
// matching key, instead of picking the latest.
func TestFindSession(t *testing.T) {
	ctx := context.Background()
	j := newMemJournal()
	j.records["k-old"] = Record{Key: "k-old", Bridge: "demo", NativeSessionID: "sess_1"}
	j.records["k-new"] = Record{Key: "k-new", Bridge: "demo", NativeSessionID: "sess_9",
		NativeHistory: []NativeSession{{ID: "sess_1"}, {ID: "sess_9"}}}
	j.records["k-other"] = Record{Key: "k-other", Bridge: "demo", NativeSessionID: "sess_2"}

	if rec, err := FindSession(ctx, j, "k-new"); err != nil || rec.Key != "k-new" {
		t.Errorf("by key: %+v, %v", rec, err)
	}
	if rec, err := FindSession(ctx, j, "sess_2"); err != nil || rec.Key != "k-other" {
		t.Errorf("by a native id one session had: %+v, %v", rec, err)
	}
	if rec, err := FindSession(ctx, j, "sess_9"); err != nil || rec.Key != "k-new" {
		t.Errorf("by the current native id: %+v, %v", rec, err)
	}
	_, err := FindSession(ctx, j, "sess_1")
	if !errors.Is(err, ErrAmbiguousSession) || !strings.Contains(err.Error(), "k-old") || !strings.Contains(err.Error(), "k-new") {
		t.Errorf("a native id two sessions had: %v; want ErrAmbiguousSession naming k-old and k-new", err)
	}
	if _, err := FindSession(ctx, j, "nope"); !errors.Is(err, ErrUnknownSession) {
		t.Errorf("an unknown id: %v, want ErrUnknownSession", err)
	}
}
