package scan

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// strWordSpecial must agree with the byte table on every word: any byte
// value at any place among safe ones, and random words, whose bytes may
// borrow from one another.
func TestStrWordSpecialMatchesTable(t *testing.T) {
	want := func(w []byte) bool {
		for _, c := range w {
			if !strSafe[c] {
				return true
			}
		}
		return false
	}
	check := func(w []byte) {
		if got := strWordSpecial(binary.LittleEndian.Uint64(w)); got != want(w) {
			t.Fatalf("strWordSpecial(%q) = %v, want %v", w, got, !got)
		}
	}
	for c := range 256 {
		for at := range 8 {
			w := []byte("abcdefgh")
			w[at] = byte(c)
			check(w)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		var w [8]byte
		for i := range w {
			w[i] = byte(r.IntN(256))
			if r.IntN(4) > 0 {
				w[i] = byte(0x20 + r.IntN(0x60)) // mostly printable, as text is
			}
		}
		check(w[:])
	}
}
