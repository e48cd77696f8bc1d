package bridge

import (
	"encoding/json"
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
