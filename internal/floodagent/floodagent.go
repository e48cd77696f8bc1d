// Package floodagent is an ACP agent that answers the handshake and then
// floods each prompt with text chunks as fast as a pipe takes them: the
// load for benchmarks and crash tests of everything downstream of the wire.
// It speaks just enough of the protocol for a bridge (initialize,
// session/new, session/prompt, session/cancel), on OS pipes, so the bytes
// cross the kernel as an agent process's would.
package floodagent

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
)

// Transport starts a flood agent in process at every Connect. It
// implements acpclient.Transport.
type Transport struct {
	// Chunks is how many agent_message_chunk updates each prompt gets
	// before its answer.
	Chunks int
	// ToolEvery, when positive, adds a tool call and its completion after
	// every ToolEvery chunks, so floods carry more than text.
	ToolEvery int
	// Varied makes each prompt's chunks a varied flood (varied.go): text
	// with escapes, two key orders, a changing _meta. ToolEvery is then
	// not used.
	Varied bool
}

// Connect starts the agent and returns the client's end of its pipes.
func (t *Transport) Connect(ctx context.Context) (io.ReadWriteCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe() // client → agent
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe() // agent → client
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	s := &stream{r: outR, w: inW, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer outW.Close()
		defer inR.Close()
		serve(inR, outW, t.settings())
	}()
	return s, nil
}

func (t *Transport) linesPerFlood() int { return t.settings().lines() }

func (t *Transport) settings() settings { return settings{t.Chunks, t.ToolEvery, t.Varied} }

// stream is the client's end: it reads the agent's output and writes its
// input; Close ends the agent and waits for it.
type stream struct {
	r, w *os.File
	once sync.Once
	done chan struct{}
}

func (s *stream) Read(p []byte) (int, error)  { return s.r.Read(p) }
func (s *stream) Write(p []byte) (int, error) { return s.w.Write(p) }

func (s *stream) Close() error {
	s.once.Do(func() {
		s.w.Close()
		s.r.Close() // a flood blocked on a full pipe fails and returns
	})
	<-s.done
	return nil
}

type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		SessionID string `json:"sessionId"`
	} `json:"params"`
}

// settings are what an agent floods each prompt with.
type settings struct {
	chunks, toolEvery int
	varied            bool
}

// lines is how many lines a prompt's flood and answer take.
func (s settings) lines() int {
	lines := s.chunks + 1
	if s.toolEvery > 0 && !s.varied {
		lines += 2 * (s.chunks / s.toolEvery)
	}
	return lines
}

// flood writes the lines of one prompt's flood.
func (s settings) flood(out *bufio.Writer, session string) bool {
	if s.varied {
		return floodVaried(out, session, s.chunks)
	}
	return flood(out, session, s.chunks, s.toolEvery)
}

// serve answers requests from r on w until r ends or a write fails.
func serve(r io.Reader, w io.Writer, set settings) {
	in := bufio.NewScanner(r)
	in.Buffer(make([]byte, 64<<10), 16<<20)
	out := bufio.NewWriterSize(w, 64<<10)
	reply := func(id json.RawMessage, result string) bool {
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
		return out.Flush() == nil
	}
	sessions := 0
	for in.Scan() {
		var m message
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue // a notification (session/cancel) or junk: nothing to answer
		}
		ok := true
		switch m.Method {
		case "initialize":
			ok = reply(m.ID, `{"protocolVersion":1,"agentCapabilities":{},"authMethods":[]}`)
		case "session/new":
			sessions++
			ok = reply(m.ID, `{"sessionId":"flood-`+strconv.Itoa(sessions)+`"}`)
		case "session/prompt":
			ok = set.flood(out, m.Params.SessionID) && reply(m.ID, `{"stopReason":"end_turn"}`)
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", m.ID)
			ok = out.Flush() == nil
		}
		if !ok {
			return
		}
	}
}

// flood writes the chunks (and tool calls) of one prompt. Each line is
// built from fixed parts and the chunk number straight into the writer's
// buffer, without fmt: the agent's writing must cost little next to the
// pipe, or the floor of a benchmark is the agent's formatting rather than
// the pipe (an fmt.Fprintf per line took several times the pipe's time).
func flood(out *bufio.Writer, session string, chunks, toolEvery int) bool {
	sid := strconv.Quote(session)
	chunkHead := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + sid +
		`,"update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"chunk `
	const chunkTail = ` "}}}}` + "\n"
	toolHead := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + sid +
		`,"update":{"sessionUpdate":"tool_call","toolCallId":"t`
	const toolTail = `","title":"Read file","kind":"read","status":"in_progress"}}}` + "\n"
	doneHead := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + sid +
		`,"update":{"sessionUpdate":"tool_call_update","toolCallId":"t`
	const doneTail = `","status":"completed"}}}` + "\n"
	var line []byte
	write := func(head string, n int, tail string) {
		line = append(strconv.AppendInt(append(line[:0], head...), int64(n), 10), tail...)
		out.Write(line)
	}
	for i := range chunks {
		write(chunkHead, i, chunkTail)
		if toolEvery > 0 && (i+1)%toolEvery == 0 {
			write(toolHead, i, toolTail)
			write(doneHead, i, doneTail)
		}
	}
	return out.Flush() == nil
}
