package bridge

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// linearRow is findRow as a scan of every row, the meaning the index must
// keep.
func linearRow(v *SessionView, id string, turn uint64, anyTurn bool) int {
	for i := len(v.Tools) - 1; i >= 0; i-- {
		if r := &v.Tools[i]; r.Tool.ID == id && (r.Turn == turn || anyTurn) {
			return i
		}
	}
	return -1
}

// The row index finds what a scan of the rows finds, through turns that
// let rows go, late and replayed updates, ids reused across turns, views
// moved by value (a new address: the index is not theirs) and clones
// applied to apart.
func TestViewRowIndexMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	moved := []SessionView{{}}
	v := &moved[0]
	var clones []SessionView
	turn := uint64(0)
	kinds := []Kind{KindToolStart, KindToolUpdate, KindToolEnd}
	statuses := []string{"pending", "in_progress", "completed", "failed"}
	tool := func() *ToolCall {
		return &ToolCall{ID: fmt.Sprint("call_", rng.IntN(40)), Status: statuses[rng.IntN(len(statuses))]}
	}
	for step := range 5000 {
		ev := Event{Key: "k"}
		switch r := rng.IntN(100); {
		case r < 3:
			turn++
			ev.Kind, ev.Turn = KindTurnStart, turn
		case r < 5:
			ev.Kind, ev.Turn = KindTurnEnd, turn
		case r < 7:
			moved = append(moved, *v) // the old place is let go
			v = &moved[len(moved)-1]
			continue
		case r < 9:
			clones = append(clones, v.clone())
			if len(clones) > 4 {
				clones = clones[1:]
			}
			continue
		case r < 12 && len(clones) > 0:
			clones[rng.IntN(len(clones))].Apply(Event{Key: "k", Kind: KindToolStart, Turn: turn, Tool: tool()})
			continue
		default:
			ev.Kind = kinds[rng.IntN(len(kinds))]
			ev.Turn = turn
			ev.Late = rng.IntN(10) == 0
			if rng.IntN(20) == 0 {
				ev.Turn = 0 // replayed
			}
			ev.Tool = tool()
		}
		v.Apply(ev)
		views := []*SessionView{v}
		for i := range clones {
			views = append(views, &clones[i])
		}
		for _, w := range views {
			for range 4 {
				name := fmt.Sprint("call_", rng.IntN(40))
				for _, any := range []bool{false, true} {
					if got, want := w.findRow(name, turn, any), linearRow(w, name, turn, any); got != want {
						t.Fatalf("step %d: findRow(%s, %d, %v) = %d, a scan finds %d", step, name, turn, any, got, want)
					}
				}
			}
		}
	}
}

// BenchmarkViewManyTools applies the tool calls of a long replayed
// session, each a start and an end (every one a new id), to a view, and
// reports the time per event: flat in the number of calls with the row
// index, where a scan grew with every row.
func BenchmarkViewManyTools(b *testing.B) {
	for _, calls := range []int{1000, 20000} {
		b.Run(fmt.Sprint(calls), func(b *testing.B) {
			evs := make([]Event, 0, 2*calls)
			for i := range calls {
				id := fmt.Sprint("call_", i)
				evs = append(evs, Event{Key: "k", Kind: KindToolStart, Tool: &ToolCall{ID: id, Status: "pending"}},
					Event{Key: "k", Kind: KindToolEnd, Tool: &ToolCall{ID: id, Status: "completed"}})
			}
			for b.Loop() {
				var v SessionView
				for _, ev := range evs {
					v.Apply(ev)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
		})
	}
}
