// Package demoagent is the built-in agent of the examples: a scripted ACP
// agent (package acptest) that runs in-process, so the examples work
// offline with nothing installed. One turn, the same whatever the prompt,
// shows every part of the library:
// it thinks, publishes a plan, streams text, announces a tool call, asks
// permission, writes a file in the workspace through fs/write_text_file,
// reads it back through fs/read_text_file, reports usage and ends the turn.
package demoagent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
)

// FileName is the file the demo agent writes in its workspace.
const FileName = "acprun-demo.txt"

// Transport starts a fresh demo agent on an in-memory pipe at every
// Connect, so a bridge that restarts a dead agent gets a new one. It
// implements acpclient.Transport. The agent writes FileName in the cwd of
// the session it works in, whichever the host opened it with.
type Transport struct {
	// Name appears in the agent's answer and in the file it writes, so
	// several demo agents can be told apart.
	Name string
	// ResumeID, if set, is a session id the agent accepts in session/load,
	// replaying a short history, as if it had been saved earlier.
	ResumeID string
	// Pace is the pause between streamed pieces (0: 30ms).
	Pace time.Duration
}

// Connect starts the agent and returns the client's end of its stream.
// The agent stops when that stream is closed.
func (t *Transport) Connect(ctx context.Context) (io.ReadWriteCloser, error) {
	agent := &acptest.Transport{Script: Script(t.Name, t.ResumeID, t.Pace)}
	return agent.Connect(ctx)
}

// Script returns the demo agent's script. name labels its output
// (default "demo"); resumeID, when set, can be loaded; pace is the pause
// between streamed pieces (0: 30ms). It writes FileName in its session's
// cwd; when the host refuses the write, its tool call fails and it says
// so.
func Script(name, resumeID string, pace time.Duration) acptest.Script {
	if name == "" {
		name = "demo"
	}
	if pace <= 0 {
		pace = 30 * time.Millisecond
	}
	file := acptest.CwdToken + "/" + FileName
	content := fmt.Sprintf("Hello from the %s agent.\nThis file was written through ACP's fs/write_text_file.\n", name)
	sleep := acptest.Step{Sleep: acptest.Duration(pace)}

	var steps []acptest.Step
	stream := func(kind, text string) {
		for _, piece := range pieces(text) {
			steps = append(steps, acptest.Step{Update: update(map[string]any{
				"sessionUpdate": kind,
				"content":       map[string]any{"type": "text", "text": piece},
			})}, sleep)
		}
	}
	plan := func(statuses ...string) acptest.Step {
		titles := []string{"Look at the request", "Write " + FileName, "Read it back"}
		var entries []map[string]any
		for i, s := range statuses {
			entries = append(entries, map[string]any{"content": titles[i], "priority": "medium", "status": s})
		}
		return acptest.Step{Update: update(map[string]any{"sessionUpdate": "plan", "entries": entries})}
	}
	tool := func(id, status string) acptest.Step {
		return acptest.Step{Update: update(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": status})}
	}

	// A pause before the first output, so a terminal shows the spinner.
	steps = append(steps, acptest.Step{Sleep: acptest.Duration(8 * pace)})
	stream("agent_thought_chunk", "The user wants a change in the workspace. I will note what I do in a small file, then read it back to check the write.")
	steps = append(steps, plan("in_progress", "pending", "pending"))
	stream("agent_message_chunk", fmt.Sprintf("I'm the %s agent. I'll write %s in your workspace and read it back.\n", name, FileName))
	steps = append(steps,
		plan("completed", "in_progress", "pending"),
		acptest.Step{Update: update(map[string]any{
			"sessionUpdate": "tool_call", "toolCallId": "call_write", "title": "Write " + FileName,
			"kind": "edit", "status": "pending",
			"locations": []map[string]any{{"path": file}},
			"rawInput":  map[string]any{"path": file, "content": content},
		})},
		acptest.Step{Permission: &acptest.Permission{
			ToolCall: update(map[string]any{"toolCallId": "call_write"}),
			Options: []acptest.PermissionOption{
				{OptionID: "allow", Name: "Allow", Kind: acpclient.PermissionAllowOnce},
				{OptionID: "allow-always", Name: "Always allow", Kind: acpclient.PermissionAllowAlways},
				{OptionID: "reject", Name: "Reject", Kind: acpclient.PermissionRejectOnce},
			},
			OnSelect: map[string][]acptest.Step{"allow": {
				tool("call_write", "in_progress"),
				{WriteFile: &acptest.WriteFile{Path: file, Content: content,
					OnOK: []acptest.Step{
						{Update: update(map[string]any{
							"sessionUpdate": "tool_call_update", "toolCallId": "call_write", "status": "completed",
							"content": []map[string]any{{"type": "diff", "path": file, "newText": content}},
						})},
						plan("completed", "completed", "in_progress"),
						{Update: update(map[string]any{
							"sessionUpdate": "tool_call", "toolCallId": "call_read", "title": "Read " + FileName,
							"kind": "read", "status": "in_progress", "locations": []map[string]any{{"path": file}},
						})},
						{ReadFile: &acptest.ReadFile{Path: file}},
						tool("call_read", "completed"),
						plan("completed", "completed", "completed"),
						{Text: fmt.Sprintf("Done: %s is in your workspace.\n", FileName)},
					},
					OnError: []acptest.Step{
						tool("call_write", "failed"),
						{Text: fmt.Sprintf("The host refused the write: %s was not written, so there is nothing to read back.\n", FileName)},
					},
				}},
			}},
			OnReject:    []acptest.Step{tool("call_write", "failed"), {Text: "Understood: I left your workspace untouched.\n"}},
			OnCancelled: []acptest.Step{tool("call_write", "failed"), {Text: "The request was cancelled; nothing was written.\n"}},
		}},
		acptest.Step{Update: update(map[string]any{
			"sessionUpdate": "usage_update", "used": 5120, "size": 200000,
			"cost": map[string]any{"amount": 0.0042, "currency": "USD"},
		})},
	)

	return acptest.Script{
		QuietReports: true, // the demo shows outcomes through the host, not as agent text
		Initialize: acptest.InitializeScript{
			AgentInfo: update(map[string]any{"name": "acphost-demo", "title": "acphost demo agent (" + name + ")", "version": "1.0.0"}),
		},
		NewSession: acptest.NewSessionScript{
			Modes: update(map[string]any{
				"currentModeId": "default",
				"availableModes": []map[string]any{
					{"id": "default", "name": "Default"},
					{"id": "careful", "name": "Careful", "description": "Explains before acting"},
				},
			}),
		},
		LoadSession: acptest.LoadSessionScript{
			Sessions: nonEmpty(resumeID),
			Replay: []acptest.Step{
				{Update: update(map[string]any{"sessionUpdate": "user_message_chunk", "content": map[string]any{"type": "text", "text": "an earlier prompt"}})},
				{Update: update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "an earlier answer"}})},
			},
			Modes: update(map[string]any{
				"currentModeId":  "default",
				"availableModes": []map[string]any{{"id": "default", "name": "Default"}, {"id": "careful", "name": "Careful"}},
			}),
		},
		Prompts: []acptest.Turn{{
			Steps: steps,
			Usage: update(map[string]any{"totalTokens": 1536, "inputTokens": 1024, "outputTokens": 512}),
		}},
	}
}

// Modes is the demo agent's mode table: both its modes ask before every
// write, so a host that knows it reports its sessions as protected.
func Modes() *bridge.ModeTable {
	return &bridge.ModeTable{
		Asking: "default",
		Safe:   []string{"careful"},
		Source: "examples/internal/demoagent (our own script: it asks before it writes, in every mode)",
	}
}

// pieces splits text into chunks of a few words, the way agents stream.
func pieces(text string) []string {
	words := strings.SplitAfter(text, " ")
	var out []string
	for i := 0; i < len(words); i += 3 {
		out = append(out, strings.Join(words[i:min(i+3, len(words))], ""))
	}
	return out
}

func update(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of strings and numbers: cannot fail
	}
	return b
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
