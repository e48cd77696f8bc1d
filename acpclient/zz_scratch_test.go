package acpclient

import "testing"

var zzLine = []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"flood-1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"chunk 12345 "}}}}`)

func BenchmarkZZScan(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		n, _ := scanChunkLine(zzLine, false)
		_ = n
	}
}
