package bridge

import "github.com/acphost/acphost/fsroot"

// MaxTextFileWrite tells the Conn the largest fs/write_text_file content
// the session's Files accept, so a bigger write is refused before its
// content is decoded. fsroot's roots report their write cap; Files of
// another kind decide for themselves (0: no cap here). A write for no known
// session, or one with no Files, is refused anyway, so it gets fsroot's
// default cap rather than a free decode.
func (c *agentClient) MaxTextFileWrite(sessionID string) int64 {
	s := c.b.session(sessionID)
	if s == nil || s.cfg.Files == nil {
		return fsroot.DefaultMaxFileSize
	}
	if capped, ok := s.cfg.Files.(interface{ MaxWriteSize() int64 }); ok {
		return capped.MaxWriteSize()
	}
	return 0
}
