package acpclient

import (
	"context"
	"encoding/json"
)

// Client is what a host implements to serve one agent: it receives the
// agent's session updates and answers its permission requests. The optional
// interfaces below (TextFileReader, TextFileWriter, Terminals, Elicitations,
// ExtensionHandler) add the rest of the agent→client surface; Conn advertises
// exactly the capabilities the value implements.
//
// Every method is called on the Conn's single dispatch goroutine, in the order
// the agent sent the messages, so a host sees a permission request right after
// the tool call that announced it. Methods must therefore return promptly and
// must not make blocking calls on the same Conn (start a goroutine for that):
// a slow method slows the agent down, it does not lose messages. Methods that
// may wait for a person (permission, elicitation) or a process (terminal exit)
// are handed a reply function instead of returning a value; call it once, now
// or later, from any goroutine. Their ctx is cancelled when the agent
// abandons the request ($/cancel_request, which Conn answers with -32800
// itself) or the connection ends.
type Client interface {
	// SessionUpdate receives one session/update notification.
	SessionUpdate(ctx context.Context, n *SessionNotification)
	// RequestPermission receives a permission request; reply answers it.
	RequestPermission(ctx context.Context, req *RequestPermissionRequest, reply func(*RequestPermissionResponse, error))
}

// TextFileReader serves fs/read_text_file. Return an *Error with
// CodeResourceNotFound for a missing file.
type TextFileReader interface {
	ReadTextFile(ctx context.Context, req *ReadTextFileRequest) (*ReadTextFileResponse, error)
}

// TextFileWriter serves fs/write_text_file.
type TextFileWriter interface {
	WriteTextFile(ctx context.Context, req *WriteTextFileRequest) error
}

// Terminals serves the terminal/* methods, all of which the capability turns
// on together.
type Terminals interface {
	CreateTerminal(ctx context.Context, req *CreateTerminalRequest) (*CreateTerminalResponse, error)
	TerminalOutput(ctx context.Context, req *TerminalRequest) (*TerminalOutputResponse, error)
	// WaitForTerminalExit replies when the terminal's command has ended.
	WaitForTerminalExit(ctx context.Context, req *TerminalRequest, reply func(*TerminalExitStatus, error))
	KillTerminal(ctx context.Context, req *TerminalRequest) error
	ReleaseTerminal(ctx context.Context, req *TerminalRequest) error
}

// TerminalStarter is implemented by Terminals that answer terminal/create
// later, from any goroutine: starting a command can take a round trip (on
// an SSH host), which must not hold up the dispatch goroutine. Conn then
// calls StartTerminal instead of CreateTerminal; reply answers, once.
type TerminalStarter interface {
	StartTerminal(ctx context.Context, req *CreateTerminalRequest, reply func(*CreateTerminalResponse, error))
}

// Elicitations serves elicitation/create and elicitation/complete.
type Elicitations interface {
	// ElicitationModes lists the modes the host renders: "form", "url".
	ElicitationModes() []string
	// CreateElicitation asks the user; reply answers. Requests in a mode not
	// listed by ElicitationModes are refused by Conn with -32602.
	CreateElicitation(ctx context.Context, req *CreateElicitationRequest, reply func(*CreateElicitationResponse, error))
	CompleteElicitation(ctx context.Context, n *CompleteElicitationNotification)
}

// ExtensionHandler receives what the protocol leaves to vendors: requests
// whose method starts with "_", and notifications of any method this package
// does not handle (e.g. "_kiro.dev/metadata"). Without one, such requests get
// -32601 and such notifications are dropped.
type ExtensionHandler interface {
	HandleExtension(ctx context.Context, method string, params json.RawMessage) (any, error)
	HandleExtensionNotification(ctx context.Context, method string, params json.RawMessage)
}

// capabilitiesOf returns the client capabilities that follow from what c
// implements.
func capabilitiesOf(c Client) ClientCapabilities {
	var caps ClientCapabilities
	_, caps.FS.ReadTextFile = c.(TextFileReader)
	_, caps.FS.WriteTextFile = c.(TextFileWriter)
	_, caps.Terminal = c.(Terminals)
	if e, ok := c.(Elicitations); ok {
		ec := &ElicitationCapabilities{}
		for _, m := range e.ElicitationModes() {
			switch m {
			case "form":
				ec.Form = &Marker{}
			case "url":
				ec.URL = &Marker{}
			}
		}
		if ec.Form != nil || ec.URL != nil {
			caps.Elicitation = ec
		}
	}
	return caps
}
