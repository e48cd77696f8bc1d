package fsroot

import "strings"

// sliceLines returns lines [line, line+limit) of text, 1-based, keeping each
// line's own ending ("\n" or "\r\n") and any BOM on the first line, so a
// slice is byte-identical to the same span of the file. line 0 means from
// the start; limit 0 means to the end. A start past the end gives "".
func sliceLines(text string, line, limit int) string {
	if line <= 1 && limit == 0 {
		return text
	}
	start := 0
	for n := 1; n < line; n++ {
		i := strings.IndexByte(text[start:], '\n')
		if i < 0 {
			return ""
		}
		start += i + 1
	}
	if limit == 0 {
		return text[start:]
	}
	end := start
	for n := 0; n < limit; n++ {
		i := strings.IndexByte(text[end:], '\n')
		if i < 0 {
			return text[start:]
		}
		end += i + 1
	}
	return text[start:end]
}
