package journal

import (
	"strconv"
	"testing"
)

// BenchmarkAppend appends text events in batches of 1, 64 and 512 (the
// Host's pump sends whatever waited while the previous batch committed)
// and reports events/s.
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{1, 64, 512} {
		b.Run("batch="+strconv.Itoa(size), func(b *testing.B) {
			db := openTest(b)
			pos, last := uint64(0), map[string]uint64{}
			keys := []string{"k1", "k2", "k3", "k4"}
			events := 0
			for b.Loop() {
				mustAppend(b, db, flood(size, &pos, keys, last)...)
				events += size
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
