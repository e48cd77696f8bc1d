package bridge

import (
	"encoding/json"
	"math/bits"
	"strings"
	"testing"
)

// checkJSONString fails unless appendJSONString writes what json.Marshal
// writes for s.
func checkJSONString(t *testing.T, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
		t.Fatalf("appendJSONString(%q) = %s, want x%s", s, got, want)
	}
}

// TestJSONStringIsEncodingJSONs: every ASCII byte alone and inside text,
// the runes encoding/json escapes, bytes that are not UTF-8 (alone, in a
// run, a rune cut short) and multi-byte text come out as encoding/json
// writes them.
func TestJSONStringIsEncodingJSONs(t *testing.T) {
	for c := range 0x100 {
		checkJSONString(t, string(rune(c)))
		checkJSONString(t, "ab"+string([]byte{byte(c)})+"cd")
	}
	for _, s := range []string{"", "plain text", "line one\nline two\r\n\ttabbed", `say "hi" \ now`,
		"<b>&amp;</b>", "\u2028\u2029x\u2027\u202a", "naïve — 日本語 🙂", "bad \xff\xfe utf-8", "\xe2\x80",
		"cut at the end \xf0\x9f\x99", "\xed\xa0\x80 surrogate", strings.Repeat("chunk 12 ", 1000)} {
		checkJSONString(t, s)
	}
}

// TestJSONStringWordBoundaries places each byte, and a rune that is
// escaped or cut short, at every offset of texts long enough for the word
// loop and its tail, so that each is found in the first and second word of
// sixteen, in a word of eight alone and in the bytes the table checks.
func TestJSONStringWordBoundaries(t *testing.T) {
	specials := []string{"\u2028", "\xe2\x80", "é", "\xff"}
	for c := range 0x100 {
		specials = append(specials, string([]byte{byte(c)}))
	}
	for _, n := range []int{7, 8, 9, 15, 16, 17, 23, 24, 31, 33} {
		for at := range n {
			for _, special := range specials {
				s := strings.Repeat("a", at) + special + strings.Repeat("b", n-at)
				checkJSONString(t, s)
			}
		}
	}
}

// TestNotPlainInFlagsTheFirst: in a word of plain bytes, then any byte,
// then bytes that borrow or not, the first byte that is not plain is the
// lowest one flagged, and a plain word has none.
func TestNotPlainInFlagsTheFirst(t *testing.T) {
	for at := range 8 {
		for c := range 0x100 {
			for _, fill := range []byte{' ', '!', '#', '=', '?', '[', ']', '~', 0x7f} {
				for _, after := range []byte{0x00, 0x01, ' ', '!', '"', '=', '\\', 0x7f, 0x80, 0xff} {
					var word [8]byte
					for i := range word {
						word[i] = fill
						if i > at {
							word[i] = after
						}
					}
					word[at] = byte(c)
					want := 8
					for i, w := range word {
						if !jsonPlain[w] {
							want = i
							break
						}
					}
					m := notPlainIn(load64(string(word[:]), 0))
					if got := bits.TrailingZeros64(m) / 8; got != want {
						t.Fatalf("notPlainIn(%q) = %#x: first flag on byte %d, want %d", word, m, got, want)
					}
				}
			}
		}
	}
}

func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"Hello", "<\u2028\xff\"", "a\nb\x00\x7f", "日本\xe2\x80"} {
		f.Add(s)
	}
	f.Fuzz(checkJSONString)
}

// BenchmarkJSONString writes a long plain text (a merged flood of deltas)
// and one with the escapes of ordinary prose.
func BenchmarkJSONString(b *testing.B) {
	for name, s := range map[string]string{
		"plain": strings.Repeat("chunk 1234 ", 1000),
		"prose": strings.Repeat("A line of \"text\" — naïve.\n", 400),
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			var buf []byte
			for b.Loop() {
				buf = appendJSONString(buf[:0], s)
			}
		})
	}
}
