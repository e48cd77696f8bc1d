package bridge

import (
	"encoding/json"
	"testing"
)

// BenchmarkEventJSON encodes a text delta and a tool update, each through
// json.Marshal (which checks and copies what MarshalJSON returns) and
// through AppendJSON into a reused buffer, as the journal and acprun
// --events do.
func BenchmarkEventJSON(b *testing.B) {
	examples := filledEvents()
	for _, kind := range []Kind{KindText, KindToolUpdate} {
		ev := examples[kind]
		b.Run(string(kind)+"/marshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(ev); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(string(kind)+"/append", func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				var err error
				if buf, err = ev.AppendJSON(buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
