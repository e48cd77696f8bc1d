package scan

// LocateUpdate finds the update object in already validated JSON: a whole
// session/update line (inLine) or its params. It walks the bytes once
// with the scanner's lexer, where encoding/json would validate them again
// and then decode. It gives up (false) on a key that encoding/json might
// match to params or update other than byte for byte; the caller then
// decodes.
func LocateUpdate(b []byte, inLine bool) ([]byte, bool) {
	s := chunkScan{b: b}
	var found span
	ok := false
	var walk func(want string, last bool) bool
	walk = func(want string, last bool) bool {
		return s.object(func(key []byte, simple bool) bool {
			switch {
			case simple && string(key) == want:
				if last {
					found, ok = s.rawValue()
					return ok
				}
				if s.peek() != '{' {
					return false // the decoding path says what that means
				}
				return walk("update", true)
			case !simple || foldsToAny(key, []string{want}):
				return false
			}
			return s.skip()
		})
	}
	s.ws()
	var walked bool
	if inLine {
		walked = walk("params", false)
	} else {
		walked = walk("update", true)
	}
	if !walked || !ok {
		return nil, false
	}
	return b[found.start:found.end], true
}
