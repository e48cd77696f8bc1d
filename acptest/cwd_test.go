package acptest_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
)

// CwdToken becomes the session's cwd in updates and file paths, and a
// write runs OnOK or OnError by the client's answer.
func TestSessionCwdAndWriteBranches(t *testing.T) {
	path := acptest.CwdToken + "/note.txt"
	write := acptest.WriteFile{Path: path, Content: "x",
		OnOK: []acptest.Step{{Text: "wrote it"}}, OnError: []acptest.Step{{Text: "refused"}}}
	second := write
	c := start(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Update: raw(`{"sessionUpdate":"tool_call","toolCallId":"w","title":"Write","locations":[{"path":"` + path + `"}]}`)},
		{WriteFile: &write},
		{WriteFile: &second},
		{ReadFile: &acptest.ReadFile{Path: path}},
	}}}})
	c.initialize()
	s := c.newSession() // its cwd is /tmp
	id := c.prompt(s, "go")
	if m := c.next(); !strings.Contains(string(m.Params), `"locations":[{"path":"/tmp/note.txt"}]`) {
		t.Errorf("the tool call: %s", m.line)
	}
	req := c.request("fs/write_text_file")
	if !strings.Contains(string(req.Params), `"path":"/tmp/note.txt"`) {
		t.Errorf("write params = %s", req.Params)
	}
	c.reply(req.ID, `{}`)
	c.replyError(c.request("fs/write_text_file").ID, -32603, "refused by the host")
	req = c.request("fs/read_text_file")
	if !strings.Contains(string(req.Params), `"path":"/tmp/note.txt"`) {
		t.Errorf("read params = %s", req.Params)
	}
	c.reply(req.ID, `{"content":"x"}`)
	_, got := c.stopReason(id)
	want := []string{"write /tmp/note.txt: ok", "wrote it", "write /tmp/note.txt: error -32603 refused by the host", "refused", "read /tmp/note.txt: x"}
	if !slices.Equal(got, want) {
		t.Errorf("texts %q, want %q", got, want)
	}
}
