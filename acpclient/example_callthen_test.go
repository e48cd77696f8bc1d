package acpclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// ExampleConn_CallThen reports the answer to a request where it sits among
// the agent's messages: the hook runs after every update the agent sent
// before answering (here the text it sends while it takes the request).
func ExampleConn_CallThen() {
	ctx := context.Background()
	agent := &acptest.Transport{Script: acptest.Script{Methods: map[string]acptest.Reply{
		"_vendor/steer": {Steps: []acptest.Step{{Text: "taking it"}}, Result: json.RawMessage(`{"outcome":"injected"}`)},
	}}}
	client := &printer{}
	conn, err := acpclient.Connect(ctx, agent, client, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Initialize(ctx, &acpclient.InitializeRequest{}); err != nil {
		log.Fatal(err)
	}
	session, err := conn.NewSession(ctx, &acpclient.NewSessionRequest{Cwd: "/tmp"})
	if err != nil {
		log.Fatal(err)
	}
	answered := make(chan string, 1)
	err = conn.CallThen(ctx, "_vendor/steer", map[string]string{"sessionId": session.SessionID, "text": "use v2"}, nil,
		func(result json.RawMessage, err error) {
			client.mu.Lock()
			defer client.mu.Unlock()
			answered <- fmt.Sprintf("answer %s, after the agent said %q", result, client.text.String())
		})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-answered)
	// Output:
	// answer {"outcome":"injected"}, after the agent said "taking it"
}
