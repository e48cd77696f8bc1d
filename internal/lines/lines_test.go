package lines

import (
	"errors"
	"slices"
	"testing"
)

func TestWriterSendsWholeLines(t *testing.T) {
	var got []string
	w := &Writer{Send: func(line []byte) error { got = append(got, string(line)); return nil }}
	for _, part := range []string{`{"a":`, `1}` + "\n\n  \n" + `{"b":2}` + "\n" + `{"c"`, `:3}` + "\n"} {
		if n, err := w.Write([]byte(part)); n != len(part) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", part, n, err)
		}
	}
	if want := []string{`{"a":1}`, `{"b":2}`, `{"c":3}`}; !slices.Equal(got, want) {
		t.Fatalf("sent %q, want %q", got, want)
	}
}

func TestWriterReportsSendError(t *testing.T) {
	boom := errors.New("boom")
	w := &Writer{Send: func([]byte) error { return boom }}
	if n, err := w.Write([]byte("x\n")); n != 0 || !errors.Is(err, boom) {
		t.Fatalf("Write = %d, %v; want 0, boom", n, err)
	}
}
