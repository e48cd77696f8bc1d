package acpclient_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// ExampleHTTPTransport reaches an agent that runs as a service over
// Streamable HTTP, where a WebSocket cannot pass. Here the service is the
// fake agent of package acptest on a test server; a real one is reached
// the same way at its https:// URL, with its token in Header.
func ExampleHTTPTransport() {
	ctx := context.Background()
	service := httptest.NewServer(&acptest.Transport{Script: acptest.Script{
		Prompts: []acptest.Turn{{Steps: []acptest.Step{{Text: "Hello over HTTP."}}}},
	}})
	defer service.Close()

	transport := &acpclient.HTTPTransport{
		URL: service.URL + "/acp",
		// Header: http.Header{"Authorization": {"Bearer " + token}},
	}
	client := &printer{}
	conn, err := acpclient.Connect(ctx, transport, client, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Initialize(ctx, &acpclient.InitializeRequest{}); err != nil {
		log.Fatal(err)
	}
	session, err := conn.NewSession(ctx, &acpclient.NewSessionRequest{Cwd: "/srv/project"})
	if err != nil {
		log.Fatal(err)
	}
	resp, err := conn.Prompt(ctx, &acpclient.PromptRequest{
		SessionID: session.SessionID,
		Prompt:    []acpclient.ContentBlock{acpclient.TextBlock("Say hello")},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(client.text.String())
	fmt.Println(resp.StopReason)
	// Output:
	// Hello over HTTP.
	// end_turn
}
