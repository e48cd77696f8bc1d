// Package cmdline splits a command line the way a shell would, without
// running one, for the examples' --agent flags.
package cmdline

import (
	"errors"
	"strings"
)

// Split splits a command line into arguments the way a POSIX shell
// would, without running one: words are separated by blanks; single quotes
// keep everything literally; double quotes keep blanks and take backslash
// escapes of \ " $ and `; a backslash outside quotes escapes the next
// character. No expansion of any kind ($VAR, ~, globs) takes place.
func Split(line string) ([]string, error) {
	var (
		args    []string
		word    strings.Builder
		inWord  bool
		quote   rune // 0, '\'' or '"'
		escaped bool
	)
	for _, r := range line {
		switch {
		case escaped:
			if quote == '"' && !strings.ContainsRune("\\\"$`\n", r) {
				word.WriteRune('\\')
			}
			if r != '\n' { // backslash-newline is a line continuation
				word.WriteRune(r)
			}
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				word.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				word.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				args = append(args, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	switch {
	case quote != 0:
		return nil, errors.New("unterminated " + string(quote) + " quote")
	case escaped:
		return nil, errors.New("trailing backslash")
	}
	if inWord {
		args = append(args, word.String())
	}
	if len(args) == 0 {
		return nil, errors.New("empty command")
	}
	return args, nil
}
