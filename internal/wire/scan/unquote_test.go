package scan

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// unquoteCases are JSON string literals covering every escape, surrogate
// pairs, lone surrogates and invalid UTF-8, which must decode exactly as
// encoding/json decodes them.
var unquoteCases = []string{
	`""`, `"plain"`, `"line\nnext\r\n\ttab"`, `"\"\\\/\b\f"`, `"\u0000\u001f\u00e9\u2603"`,
	`"\ud83d\ude00 pair"`, `"\ud83d lone high"`, `"\ude00 lone low"`, `"\ud83d\u0041 high then A"`,
	`"\ud83d\ud83d\ude00 two highs"`, "\"caf\xe9 latin1\"", "\"\xed\xa0\x80 encoded surrogate\"",
	"\"\xff\xfe\"", "\"ok \xe2\x82 cut\"", "\"\xef\xbb\xbfBOM\"", `"\uD83D\uDE00 upper hex"`,
}

func checkUnquote(t *testing.T, lit string) {
	t.Helper()
	// encoding/json hands over the literal exactly; acpclient trims
	// it all the same.
	lit = strings.TrimSpace(lit)
	var want string
	if !strings.HasPrefix(lit, `"`) || json.Unmarshal([]byte(lit), &want) != nil {
		return // not a JSON string: never handed to Unquote
	}
	n := UnquotedLen([]byte(lit))
	if n != len(want) {
		t.Fatalf("UnquotedLen(%q) = %d, want %d", lit, n, len(want))
	}
	if got := Unquote([]byte(lit), n); got != want {
		t.Fatalf("Unquote(%q) = %q, want %q", lit, got, want)
	}
}

func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	for _, lit := range unquoteCases {
		checkUnquote(t, lit)
	}
	pieces := []string{"a", "é", "☃", "😀", `\n`, `\"`, `\\`, `\u00e9`, `\ud83d`, `\ude00`, `\ud83d\ude00`, "\xff", "\xe2\x82", "\xed\xa0\x80"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		b.WriteByte('"')
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		b.WriteByte('"')
		checkUnquote(t, b.String())
	}
}

func FuzzUnquote(f *testing.F) {
	for _, lit := range unquoteCases {
		f.Add(lit)
	}
	f.Fuzz(func(t *testing.T, lit string) { checkUnquote(t, lit) })
}
