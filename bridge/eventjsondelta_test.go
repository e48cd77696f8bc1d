package bridge

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// checkDeltaJSON fails unless AppendJSON, json.Marshal and the general
// path write the same bytes for ev (or all fail).
func checkDeltaJSON(t *testing.T, ev Event) {
	t.Helper()
	want, wantErr := ev.appendGeneralJSON(nil)
	got, err := ev.AppendJSON([]byte("prefix"))
	if (err != nil) != (wantErr != nil) || wantErr == nil && string(got) != "prefix"+string(want) {
		t.Fatalf("AppendJSON of %+v:\n got %s, %v\nwant prefix%s, %v", ev, got, err, want, wantErr)
	}
	marshaled, err := json.Marshal(ev)
	if wantErr == nil && (err != nil || string(marshaled) != string(want)) {
		t.Fatalf("json.Marshal of %+v:\n got %s, %v\nwant %s", ev, marshaled, err, want)
	}
}

// The direct encoding of deltas is the general JSON form: every key in
// its place, strings escaped as encoding/json escapes them, times as it
// writes them, and the years it refuses refused.
func TestDeltaJSONIsTheGeneralForm(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 123456789, time.FixedZone("x", 5*3600+1800))
	texts := []string{"", "Hello", `say "hi" \ now`, "<b>&amp;</b>", "tab\tnew\nline\r\b\f\x00\x1f\x7f",
		"naïve — 日本語 🙂", "\u2028\u2029", "bad \xff\xfe utf-8", "\xe2\x80"}
	for _, kind := range []Kind{KindText, KindThinking, KindUserText} {
		for _, text := range texts {
			base := Event{Pos: 42, Bridge: "agent-1", Key: "k", Session: "sess_1", Seq: 5, Turn: 2, Kind: kind, Time: at, Text: text, MessageID: "m1"}
			checkDeltaJSON(t, base)
			bare := Event{Bridge: text, Kind: kind, Text: text, MessageID: text, Replay: true, Late: true}
			checkDeltaJSON(t, bare)
		}
	}
	checkDeltaJSON(t, Event{Kind: KindText, Text: "x", Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})
	checkDeltaJSON(t, Event{Kind: KindText, Text: "x", Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)})
}

// Any field beyond those the direct encoding writes sends a delta down
// the general path: for each field of Event, a delta with that field set
// as filledEvents sets it still encodes as encoding/json does. A field
// no example fills fails the test, so a new field is covered.
func TestDeltaJSONLeavesEveryOtherFieldToTheGeneralPath(t *testing.T) {
	examples := filledEvents()
	typ := reflect.TypeFor[Event]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		var value reflect.Value
		for _, ex := range examples {
			if v := reflect.ValueOf(ex).Field(i); !v.IsZero() {
				value = v
				break
			}
		}
		if !value.IsValid() {
			t.Errorf("no example in filledEvents fills Event.%s", f.Name)
			continue
		}
		ev := Event{Pos: 1, Bridge: "a", Key: "k", Session: "s", Seq: 1, Kind: KindText, Text: "hi", MessageID: "m"}
		reflect.ValueOf(&ev).Elem().Field(i).Set(value)
		checkDeltaJSON(t, ev)
	}
}

func FuzzDeltaJSON(f *testing.F) {
	f.Add("Hello", "m1", "agent-1", uint64(3), int64(1767225600123456789), true)
	f.Add("<\u2028\xff\"", "", "", uint64(0), int64(-62135596800000000), false)
	f.Fuzz(func(t *testing.T, text, messageID, bridge string, turn uint64, nanos int64, replay bool) {
		checkDeltaJSON(t, Event{Pos: turn * 7, Bridge: bridge, Key: messageID, Seq: turn, Turn: turn, Kind: KindThinking,
			Time: time.Unix(0, nanos).UTC(), Replay: replay, Text: text, MessageID: messageID})
	})
}
