package fsroot

import (
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkInPieces runs a textChecker over text arriving in pieces of the
// given sizes (cycled), the way readAllCapped feeds it.
func checkInPieces(text string, sizes []byte) error {
	var c textChecker
	end := 0
	for i := 0; ; i++ {
		step := 1
		if len(sizes) > 0 {
			step = int(sizes[i%len(sizes)])
		}
		end = min(end+step, len(text))
		final := end == len(text)
		if err := c.check(text[:end], final); err != nil || final {
			return err
		}
	}
}

func notTextOffset(err error) int {
	var nt *NotTextError
	if errors.As(err, &nt) {
		return nt.Offset
	}
	return -1
}

// FuzzTextCheckerMatchesCheckText checks that text checked piece by piece,
// with pieces that cut runes anywhere, is refused exactly when checkText
// refuses it whole, at the same offset, both by a textChecker and by
// readAllCapped, and that checkText refuses exactly what utf8.ValidString
// does.
func FuzzTextCheckerMatchesCheckText(f *testing.F) {
	for _, seed := range []struct {
		text   string
		pieces []byte
	}{
		{"plain ascii\n", []byte{3}},
		{"caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80\r\n", []byte{1}},
		{"caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80\r\n", []byte{2, 3}},
		{"\xef\xbb\xbfbom", []byte{1, 1, 2}},
		{"cut \xe2\x98", []byte{5}},
		{"cut \xe2\x98 then ascii", []byte{6}},
		{"\xe2\x98\xe2\x98\x83", []byte{2}},
		{"lone \x80 continuation", []byte{5, 1}},
		{"\xed\xa0\x80 surrogate", []byte{1}},
		{"\xf4\x90\x80\x80 past U+10FFFF", []byte{3}},
		{"\xff", []byte{1}},
		{"", nil},
		{strings.Repeat("漢字", 40) + "\xe2\x98", []byte{7, 3}},
		{strings.Repeat("é", 100) + "\xed\xa0\x80" + strings.Repeat("a", 100), []byte{8}},
	} {
		f.Add(seed.text, seed.pieces)
	}
	f.Fuzz(func(t *testing.T, text string, pieces []byte) {
		for i := range pieces {
			pieces[i] = pieces[i]%8 + 1
		}
		whole, inPieces := checkText(text), checkInPieces(text, pieces)
		if notTextOffset(whole) != notTextOffset(inPieces) {
			t.Fatalf("%q in pieces %v: whole says %v, in pieces %v", text, pieces, whole, inPieces)
		}
		if (whole == nil) != utf8.ValidString(text) {
			t.Fatalf("%q: checkText says %v, utf8.ValidString %v", text, whole, utf8.ValidString(text))
		}
		got, read := readAllCapped(&pieceReader{text: text, sizes: pieces}, int64(len(text)), int64(len(text)), 8)
		if notTextOffset(read) != notTextOffset(whole) || (read == nil && got != text) {
			t.Fatalf("%q read in pieces %v: got %q, %v; whole says %v", text, pieces, got, read, whole)
		}
	})
}

// pieceReader reads text in reads of the given sizes (cycled), at most as
// many bytes as each Read asks for.
type pieceReader struct {
	text  string
	sizes []byte
	reads int
}

func (r *pieceReader) Read(p []byte) (int, error) {
	if r.text == "" {
		return 0, io.EOF
	}
	step := 1
	if len(r.sizes) > 0 {
		step = int(r.sizes[r.reads%len(r.sizes)])
	}
	r.reads++
	n := copy(p[:min(len(p), step)], r.text)
	r.text = r.text[n:]
	return n, nil
}
