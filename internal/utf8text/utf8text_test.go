package utf8text

import (
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"
)

func TestInvalidOffset(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want int
	}{
		{"", -1},
		{"plain", -1},
		{"\ufeffBOM\r\nNUL\x00 ünï", -1},
		{"\xff", 0},
		{"ok\xffrest", 2},
		{"é\xc3", 2},         // a sequence cut short
		{"a\xed\xa0\x80", 1}, // a surrogate
		{"\uFFFD\xfe", 3},    // a real U+FFFD is valid; the byte after is not
	} {
		if got := InvalidOffset(tt.s); got != tt.want {
			t.Errorf("InvalidOffset(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

// edgeBytes are the bytes where UTF-8's rules change: ASCII, the ends of
// the continuation ranges that E0, ED, F0 and F4 narrow, and the leads
// that are never valid.
var edgeBytes = []byte{
	0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2,
	0xdf, 0xe0, 0xe1, 0xed, 0xef, 0xf0, 0xf3, 0xf4, 0xf5, 0xff,
}

// checkers are the implementations of valid to test: valid itself (min 0)
// and each vector check this CPU has, on its own.
func checkers() []struct {
	name  string
	min   int
	valid func(string) bool
} {
	list := []struct {
		name  string
		min   int
		valid func(string) bool
	}{{"valid", 0, valid}}
	for _, check := range vectorChecks {
		list = append(list, struct {
			name  string
			min   int
			valid func(string) bool
		}{check.name, check.size, func(s string) bool { return validWith(check, s) }})
	}
	return list
}

// TestValidMatchesTheStandardLibrary puts every pair of bytes at the start,
// across the 32- and 64-byte block boundaries and at the end of ASCII and
// of text in other scripts (so also into the middle of runes), and runs of
// four edge bytes across a boundary, and checks that each implementation
// of valid agrees with utf8.ValidString. It is the vector checks' proof: a
// difference in a table, a shift or the end handling shows up here.
func TestValidMatchesTheStandardLibrary(t *testing.T) {
	fills := []string{
		strings.Repeat("a", 150),
		strings.Repeat("é", 75),
		strings.Repeat("漢", 50),
		strings.Repeat("😀", 38),
	}
	// Where the bytes go, and whether the text ends right after them.
	places := []struct {
		at  int
		end bool
	}{{0, false}, {31, false}, {63, false}, {126, true}, {127, true}}
	if len(vectorChecks) == 0 {
		t.Skip("no vector check on this CPU: valid is utf8.ValidString")
	}
	for _, impl := range checkers()[1:] {
		t.Run(impl.name, func(t *testing.T) {
			var sp splicer
			check := func(s string) {
				if got, want := impl.valid(s), utf8.ValidString(s); got != want {
					t.Fatalf("%s(%q) = %v, utf8.ValidString says %v", impl.name, s, got, want)
				}
			}
			for _, fill := range fills {
				for _, p := range places {
					for a := range 256 {
						for b := range 256 {
							check(sp.splice(fill, p.at, p.end, byte(a), byte(b)))
						}
					}
				}
			}
			for i, p := range []struct {
				at  int
				end bool
			}{{30, false}, {62, false}, {125, true}} {
				fill := fills[i%2*2]
				for _, a := range edgeBytes {
					for _, b := range edgeBytes {
						for _, c := range edgeBytes {
							for _, d := range edgeBytes {
								check(sp.splice(fill, p.at, p.end, a, b, c, d))
							}
						}
					}
				}
			}
		})
	}
}

// splice returns fill with bytes written over it from at, and cut right
// after them if end. The text is a view of a buffer that the next call
// overwrites, so that the test allocates nothing.
func (sp *splicer) splice(fill string, at int, end bool, bytes ...byte) string {
	sp.buf = append(sp.buf[:0], fill...)
	copy(sp.buf[at:], bytes)
	if end {
		sp.buf = sp.buf[:at+len(bytes)]
	}
	return unsafe.String(unsafe.SliceData(sp.buf), len(sp.buf))
}

type splicer struct{ buf []byte }

// FuzzValidMatchesTheStandardLibrary checks valid against
// utf8.ValidString on any text, at every alignment of its start, for
// each implementation.
func FuzzValidMatchesTheStandardLibrary(f *testing.F) {
	f.Add(strings.Repeat("x", 140))
	f.Add(strings.Repeat("漢字", 20) + "\xe2\x98")
	f.Add(strings.Repeat("é", 40) + "\xed\xa0\x80" + strings.Repeat("a", 30))
	f.Add(strings.Repeat("😀", 20) + "\xf4\x90\x80\x80")
	f.Fuzz(func(t *testing.T, s string) {
		for _, impl := range checkers() {
			for i := 0; len(s)-i >= impl.min && i < 64; i++ {
				if got, want := impl.valid(s[i:]), utf8.ValidString(s[i:]); got != want {
					t.Fatalf("%s(%q) = %v, utf8.ValidString says %v", impl.name, s[i:], got, want)
				}
			}
		}
	})
}

// FuzzInvalidOffset checks InvalidOffset against a rune-by-rune decode of
// the whole text, the definition of where UTF-8 stops being valid.
func FuzzInvalidOffset(f *testing.F) {
	f.Add(strings.Repeat("漢", 30) + "\xff")
	f.Add(strings.Repeat("a", 64) + "\xe0\x80\x80")
	f.Fuzz(func(t *testing.T, s string) {
		want := -1
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				want = i
				break
			}
			i += size
		}
		if got := InvalidOffset(s); got != want {
			t.Fatalf("InvalidOffset(%q) = %d, want %d", s, got, want)
		}
	})
}
