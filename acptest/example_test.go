package acptest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/acphost/acphost/acptest"
)

// ExampleAgent_Serve drives the fake agent line by line, as a test of a
// client's wire handling would: a script for an agent that announces its
// commands before session/new answers, asks permission during a turn and
// reports the answer.
func ExampleAgent_Serve() {
	script := acptest.Script{
		NewSession: acptest.NewSessionScript{Steps: []acptest.Step{
			{Update: json.RawMessage(`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"compact","description":"Compact the context"}]}`)},
		}},
		Prompts: []acptest.Turn{{
			Match: "edit",
			Steps: []acptest.Step{
				{Update: json.RawMessage(`{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"Edit main.go","kind":"edit"}`)},
				{Permission: &acptest.Permission{OnReject: []acptest.Step{{Text: "Okay, I will not edit it."}}}},
			},
		}},
	}
	// The same script as the JSON the fakeagent binary reads:
	b, _ := json.Marshal(script.Prompts[0].Steps[1])
	fmt.Println(string(b))

	toAgent, clientOut := io.Pipe()
	clientIn, fromAgent := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- acptest.NewAgent(script).Serve(ctx, toAgent, fromAgent) }()

	lines := bufio.NewScanner(clientIn)
	send := func(line string) { io.WriteString(clientOut, line+"\n") }
	next := func() string { lines.Scan(); return lines.Text() }

	send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/src","mcpServers":[]}}`)
	fmt.Println(next()) // the update comes first
	fmt.Println(next())
	send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess_1","prompt":[{"type":"text","text":"edit main.go"}]}}`)
	fmt.Println(next())
	fmt.Println(next()) // the permission request
	send(`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"reject"}}}`)
	fmt.Println(next())
	fmt.Println(next())
	fmt.Println(next())

	clientOut.Close() // end of the agent's input
	fmt.Println("Serve:", <-done)
	// Output:
	// {"permission":{"onReject":[{"text":"Okay, I will not edit it."}]}}
	// {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"compact","description":"Compact the context"}]}}}
	// {"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess_1"}}
	// {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"Edit main.go","kind":"edit"}}}
	// {"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"sess_1","toolCall":{"toolCallId":"call_1"},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}
	// {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"permission: selected reject"},"messageId":"report-1"}}}
	// {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Okay, I will not edit it."}}}}
	// {"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}
	// Serve: <nil>
}
