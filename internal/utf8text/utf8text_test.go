package utf8text

import "testing"

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
