package floodagent

import (
	"bufio"
	"strconv"
)

// A varied flood is what real agents write, not one skeleton repeated:
// markdown text with escapes (newlines, quotes, backslashes, \u escapes)
// and raw UTF-8, keys in two orders, chunks with and without a message id,
// and every fourth chunk with a _meta that changes from line to line. It
// is the load for the client's general paths, which the uniform flood
// (every line one skeleton) never leaves.

// variedPiece is a chunk's text as the agent writes it inside the JSON
// string, and as it reads once decoded.
type variedPiece struct{ wire, text string }

var variedPieces = [...]variedPiece{
	{`Here is the plan:\n\n`, "Here is the plan:\n\n"},
	{`1. Read \"main.go\" and `, "1. Read \"main.go\" and "},
	{`the café's menu `, "the café's menu "},
	{`caf\u00e9 \u65e5\u672c `, "café 日本 "},
	{"`go test`\\t./... ", "`go test`\t./... "},
	{`plain words, nothing to escape in them `, "plain words, nothing to escape in them "},
	{`C:\\work\\src `, `C:\work\src `},
	{`日本語のテキスト `, "日本語のテキスト "},
}

// variedLine appends chunk i of a varied flood for the session whose
// quoted id is sid.
func variedLine(line []byte, sid string, i int) []byte {
	p := variedPieces[i%len(variedPieces)]
	text := func(line []byte) []byte {
		return append(strconv.AppendInt(append(line, p.wire...), int64(i), 10), ' ')
	}
	line = append(line, `{"jsonrpc":"2.0","method":"session/update","params":{`...)
	switch i % 4 {
	case 0: // the usual order
		line = append(line, `"sessionId":`+sid+`,"update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"`...)
		line = append(text(line), `"}}}}`...)
	case 1: // the update first, and its keys in another order
		line = append(line, `"update":{"content":{"text":"`...)
		line = append(text(line), `","type":"text"},"sessionUpdate":"agent_message_chunk","messageId":"m1"},"sessionId":`+sid+`}}`...)
	case 2: // a _meta that changes with every such chunk
		line = append(line, `"sessionId":`+sid+`,"update":{"sessionUpdate":"agent_message_chunk","_meta":{"seq":`...)
		line = append(strconv.AppendInt(line, int64(i), 10), `},"messageId":"m1","content":{"type":"text","text":"`...)
		line = append(text(line), `"}}}}`...)
	default: // no message id
		line = append(line, `"sessionId":`+sid+`,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`...)
		line = append(text(line), `"}}}}`...)
	}
	return append(line, '\n')
}

// floodVaried writes the chunks of one varied prompt.
func floodVaried(out *bufio.Writer, session string, chunks int) bool {
	sid := strconv.Quote(session)
	var line []byte
	for i := range chunks {
		line = variedLine(line[:0], sid, i)
		out.Write(line)
	}
	return out.Flush() == nil
}

// Text is the text a flood of chunks carries, every chunk's in order, as
// a client decodes it: what a benchmark's consumer checks it received.
func Text(chunks int, varied bool) []byte {
	var text []byte
	for i := range chunks {
		if varied {
			text = append(text, variedPieces[i%len(variedPieces)].text...)
		} else {
			text = append(text, "chunk "...)
		}
		text = append(strconv.AppendInt(text, int64(i), 10), ' ')
	}
	return text
}
