package bridge

// maxToolNameLen is the longest tool name model APIs accept.
const maxToolNameLen = 64

// IdentifierTitle returns title when it is a bare tool identifier, else "".
// A bare identifier is what model APIs accept as a tool name: an ASCII
// letter or underscore, then up to 63 ASCII letters, digits, underscores
// or hyphens ("read_file", "TaskCreate", "mcp__github__list-issues"). Dots
// and spaces are excluded, so a file name ("main.go") or a human title
// ("Read main.go") is never taken for a tool name.
//
// It is a compatibility fallback (Provider.ToolNameFromTitle) for agents
// whose older streams put the tool's name in the title; plain agents do not
// use it: ACP titles are for humans, and a one-word human title such as
// "Thinking" would be misread as a name.
func IdentifierTitle(title string) string {
	if title == "" || len(title) > maxToolNameLen {
		return ""
	}
	for i := 0; i < len(title); i++ {
		c := title[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && (c == '-' || '0' <= c && c <= '9'):
		default:
			return ""
		}
	}
	return title
}
