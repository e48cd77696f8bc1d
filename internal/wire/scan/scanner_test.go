package scan

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkScan runs the scanner (the full scan, on a line of the caller's and
// on an owned one) on line, and checks what it accepts against
// encoding/json. It reports what the scanner made of the line.
func checkScan(t *testing.T, line []byte) Result {
	t.Helper()
	orig := append([]byte(nil), line...)
	var got Chunk
	res := scanOnce(line, false, &got)
	switch res {
	case OK:
		want, ok := refDecode(line)
		if !ok {
			t.Fatalf("the scanner accepted a line the general path does not deliver as a chunk: %q", line)
		}
		sameChunk(t, line, &got, &want)
		// An owned line is referred to, not copied: the same result.
		var o Chunk
		if scanOnce(bytes.Clone(line), true, &o) != OK {
			t.Fatalf("the scanner declined %q when owned", line)
		}
		sameChunk(t, line, &o, &want)
	case Fallback:
		if !json.Valid(line) {
			t.Fatalf("the scanner handed back a line that is not JSON: %q", line)
		}
	}
	if !bytes.Equal(line, orig) {
		t.Fatalf("the line was modified")
	}
	return res
}

const chunkPrefix = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":`

func TestChunkScanAccepts(t *testing.T) {
	lines := []string{
		chunkLineJSON("s", "plain"),
		chunkLineJSON("sess_1", ""),
		string(benchLines(1)[0]),
		`{"params":{"update":{"messageId":"m","content":{"text":"reordered keys","type":"text"},"sessionUpdate":"user_message_chunk"},"sessionId":"s"},"method":"session/update","jsonrpc":"2.0"}`,
		"  \t{ \"jsonrpc\" : \"2.0\" ,\n \"method\":\"session/update\",\"params\":{ \"sessionId\" : \"s\" , \"update\" : { \"sessionUpdate\" : \"agent_thought_chunk\" , \"content\" : { \"type\" : \"text\" , \"text\" : \"spaced\" } } } }\r\n",
		chunkPrefix + `{"type":"text","text":"esc \" \\ \/ \b \f \n \r \t \u0041 \u00e9 \u4e16 \u0000 end"}}}}`,
		chunkPrefix + `{"type":"text","text":"pair \ud83d\ude00 upper \uD83D\uDE00"}}}}`,
		chunkPrefix + `{"type":"text","text":"lone high \ud83d then x"}}}}`,
		chunkPrefix + `{"type":"text","text":"lone high at end \ud83d"}}}}`,
		chunkPrefix + `{"type":"text","text":"lone low \ude00 x"}}}}`,
		chunkPrefix + `{"type":"text","text":"high high \ud83d\ud83d\ude00"}}}}`,
		chunkPrefix + `{"type":"text","text":"high then BMP \ud83d\u0041"}}}}`,
		chunkPrefix + `{"type":"text","text":"high then escape \ud83d\n"}}}}`,
		chunkPrefix + `{"type":"text","text":"raw unicode héllo 世界 😀"}}}}`,
		chunkPrefix + "{\"type\":\"text\",\"text\":\"bad utf8 \xff \xc3 \xed\xa0\x80 \xf0\x9f\x98 end\"}}}}",
		chunkPrefix + "{\"type\":\"text\",\"text\":\"bad utf8 then escape \xff\\n\xfe\"}}}}",
		chunkPrefix + "{\"type\":\"text\",\"text\":\"DEL \x7f and U+FFFD \xef\xbf\xbd\"}}}}",
		chunkPrefix + `{"type":"text","text":"x"},"messageId":null}}}`,
		chunkPrefix + `{"type":"text","text":"x"},"messageId":"m\u00e9"}}}`,
		chunkPrefix + `{"type":"text","text":"x","_meta":{"a":[1,-2.5e+3,true,false,null,{"b":[]},[[]],"s\"\u1234"],"c":{}}},"_meta":[{"x":0.0},{}]},"_meta":{"y":-0}}}`,
		chunkPrefix + `{"type":"text","text":"x","_meta":null},"_meta":"str"},"_meta":12}}`,
		chunkPrefix + `{"type":"image","text":"type image, text only"}}}}`,
		chunkPrefix + `{"type":"resource_link"}}}}`,
		chunkPrefix + `{"type":"text","text":"unknown keys","Raw":"ignored","extra":{"n":[1,2]}},"unknown":1,"other":[]},"x":null},"zz":true}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"no session"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"","update":{"content":{"text":"empty session","type":"text"},"sessionUpdate":"agent_thought_chunk"}}}`,
	}
	for _, l := range lines {
		if res := checkScan(t, []byte(l)); res != OK {
			t.Errorf("scanner gave %d for %q", res, l)
		}
	}
}

func TestChunkScanFallsBack(t *testing.T) {
	lines := []string{
		chunkPrefix + `{"type":"text","text":"t","annotations":{"priority":1}}}}}`,
		chunkPrefix + `{"type":"image","data":"AAAA","mimeType":"image/png"}}}}`,
		chunkPrefix + `{"type":"resource","resource":{"uri":"file:///a","text":"x"}}}}}`,
		chunkPrefix + `{"type":"text","text":"a","TEXT":"b"}}}}`,
		chunkPrefix + `{"type":"text","text":"a","text":"b"}}}}`,
		chunkPrefix + `{"type":"te\u0078t","text":"escaped type"}}}}`,
		chunkPrefix + `{"type":"text","text":5}}}}`,
		chunkPrefix + `{"type":"text","te\u0078t":"escaped key"}}}}`,
	}
	for _, l := range lines {
		if res := checkScan(t, []byte(l)); res != Fallback {
			t.Errorf("scanner gave %d for %q", res, l)
		}
	}
}

func TestChunkScanDeclines(t *testing.T) {
	ok := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"},"messageId":"m","_meta":{}},"_meta":{}}}`
	if checkScan(t, []byte(ok)) != OK {
		t.Fatal("base line declined")
	}
	mutations := map[string][2]string{
		"trailing garbage":      {`}}}`, `}}} x`},
		"second value":          {`}}}`, `}}}{}`},
		"missing brace":         {`}}}`, `}}`},
		"id":                    {`"method"`, `"id":1,"method"`},
		"null id":               {`"method"`, `"id":null,"method"`},
		"result":                {`"method"`, `"result":{},"method"`},
		"error":                 {`"method"`, `"error":null,"method"`},
		"jsonrpc 1.0":           {`"2.0"`, `"1.0"`},
		"jsonrpc number":        {`"2.0"`, `2.0`},
		"jsonrpc null":          {`"2.0"`, `null`},
		"no jsonrpc":            {`"jsonrpc":"2.0",`, ``},
		"other method":          {`"session/update"`, `"session/updates"`},
		"escaped method":        {`"session/update"`, `"session\/update"`},
		"dup method":            {`"method":"session/update"`, `"method":"session/update","method":"session/update"`},
		"dup jsonrpc":           {`"jsonrpc":"2.0"`, `"jsonrpc":"2.0","jsonrpc":"2.0"`},
		"folded method key":     {`"method"`, `"Method"`},
		"folded params key":     {`"params"`, `"PARAMS"`},
		"folded key extra":      {`"jsonrpc":"2.0",`, `"jsonrpc":"2.0","ID":5,`},
		"long s key":            {`"sessionId"`, `"ſessionId"`},
		"kelvin key":            {`"method":"session/update",`, `"method":"session/update","\u212a":1,"ı":2,"ﬀ":3,"K":4,`},
		"escaped key":           {`"method"`, `"m\u0065thod"`},
		"escaped unknown key":   {`"method"`, `"x\u0065":1,"method"`},
		"params null":           {`"params":{`, `"params":null,"p":{`},
		"params array":          {`"params":{"sessionId":"s",`, `"params":[{"sessionId":"s",`},
		"dup params":            {`"jsonrpc":"2.0",`, `"jsonrpc":"2.0","params":{},`},
		"session number":        {`"sessionId":"s"`, `"sessionId":7`},
		"session null":          {`"sessionId":"s"`, `"sessionId":null`},
		"dup session":           {`"sessionId":"s"`, `"sessionId":"s","sessionId":"t"`},
		"folded session key":    {`"sessionId"`, `"sessionid"`},
		"dup update":            {`"sessionId":"s",`, `"sessionId":"s","update":{},`},
		"update null":           {`"update":{`, `"update":null,"u":{`},
		"other kind":            {`agent_message_chunk`, `tool_call`},
		"escaped kind":          {`agent_message_chunk`, `agent\u005fmessage_chunk`},
		"dup kind":              {`"sessionUpdate":"agent_message_chunk"`, `"sessionUpdate":"agent_message_chunk","sessionUpdate":"plan"`},
		"dup kind same":         {`"sessionUpdate":"agent_message_chunk"`, `"sessionUpdate":"agent_message_chunk","sessionUpdate":"agent_message_chunk"`},
		"folded kind key":       {`"sessionUpdate"`, `"SessionUpdate"`},
		"kind number":           {`"agent_message_chunk"`, `1`},
		"modeId":                {`"messageId":"m"`, `"messageId":"m","modeId":"x"`},
		"no content":            {`"content":{"type":"text","text":"x"},`, ``},
		"content null":          {`"content":{"type":"text","text":"x"}`, `"content":null`},
		"content string":        {`"content":{"type":"text","text":"x"}`, `"content":"x"`},
		"dup content":           {`"content":{`, `"content":{"type":"text"},"content":{`},
		"folded content key":    {`"content"`, `"Content"`},
		"no type":               {`"type":"text",`, ``},
		"unknown type":          {`"type":"text"`, `"type":"blob"`},
		"messageId number":      {`"messageId":"m"`, `"messageId":1`},
		"messageId object":      {`"messageId":"m"`, `"messageId":{}`},
		"messageId nul":         {`"messageId":"m"`, `"messageId":nul`},
		"dup messageId":         {`"messageId":"m"`, `"messageId":"m","messageId":null`},
		"folded messageId":      {`"messageId"`, `"messageID"`},
		"dup update meta":       {`"_meta":{}},`, `"_meta":{},"_meta":{}},`},
		"folded meta":           {`"_meta":{}},`, `"_META":{}},`},
		"control char":          {`"text":"x"`, "\"text\":\"a\x01b\""},
		"raw newline":           {`"text":"x"`, "\"text\":\"a\nb\""},
		"raw tab in key":        {`"text":"x"`, "\"text\":\"x\",\"a\tb\":1"},
		"bad escape":            {`"text":"x"`, `"text":"\x"`},
		"single quote escape":   {`"text":"x"`, `"text":"\'"`},
		"short unicode escape":  {`"text":"x"`, `"text":"\u12"`},
		"bad hex escape":        {`"text":"x"`, `"text":"\u12g4"`},
		"unterminated string":   {`"text":"x"}`, `"text":"x}`},
		"bad number":            {`"_meta":{}}}`, `"_meta":{"n":01}}}`},
		"bad number dot":        {`"_meta":{}}}`, `"_meta":{"n":1.}}}`},
		"bad number exp":        {`"_meta":{}}}`, `"_meta":{"n":1e}}}`},
		"bad number plus":       {`"_meta":{}}}`, `"_meta":{"n":+1}}}`},
		"bad number minus":      {`"_meta":{}}}`, `"_meta":{"n":-}}}`},
		"bad number hex":        {`"_meta":{}}}`, `"_meta":{"n":0x1}}}`},
		"bad literal":           {`"_meta":{}}}`, `"_meta":{"n":tru}}}`},
		"capital literal":       {`"_meta":{}}}`, `"_meta":{"n":True}}}`},
		"NaN":                   {`"_meta":{}}}`, `"_meta":{"n":NaN}}}`},
		"trailing comma":        {`"_meta":{}}}`, `"_meta":{"n":1,}}}`},
		"trailing comma array":  {`"_meta":{}}}`, `"_meta":[1,]}}`},
		"missing colon":         {`"_meta":{}}}`, `"_meta":{"n" 1}}}`},
		"array colon":           {`"_meta":{}}}`, `"_meta":["n":1]}}`},
		"mismatched brackets":   {`"_meta":{}}}`, `"_meta":{"n":[}]}}`},
		"non-string key":        {`"_meta":{}}}`, `"_meta":{1:2}}}`},
		"unknown bad value":     {`"jsonrpc":"2.0",`, `"jsonrpc":"2.0","x":[1 2],`},
		"trailing comma object": {`"_meta":{}}}`, `"_meta":{}},}`},
		"vertical tab ws":       {`"jsonrpc":"2.0",`, "\"jsonrpc\":\"2.0\",\v"},
		"nbsp ws":               {`"jsonrpc":"2.0",`, "\"jsonrpc\":\"2.0\",\u00a0"},
		"nul byte":              {`}}}`, "}}}\x00"},
		"deep nesting":          {`"_meta":{}}}`, `"_meta":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}}`},
		"unknown key deep":      {`"jsonrpc":"2.0",`, `"jsonrpc":"2.0","x":` + strings.Repeat(`{"a":`, 600) + `1` + strings.Repeat("}", 600) + `,`},
		"non-ASCII unknown key": {`"jsonrpc":"2.0",`, `"jsonrpc":"2.0","\u00e9":1,`},
	}
	for name, m := range mutations {
		l := strings.Replace(ok, m[0], m[1], 1)
		if l == ok {
			t.Fatalf("%s: mutation did not apply", name)
		}
		if res := checkScan(t, []byte(l)); res == OK {
			t.Errorf("%s: scanner accepted %q", name, l)
		}
	}
	for _, l := range []string{"", " ", "{", "}", "[]", "null", `"x"`, "{}", `{"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","method":"session/update"}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s"}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk"}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"note":"session/update","x":{"sessionUpdate":"agent_message_chunk"}}}`,
	} {
		if res := checkScan(t, []byte(l)); res == OK {
			t.Errorf("scanner accepted %q", l)
		}
	}
}

// TestChunkScanDepthLimit: values nested up to the limit are fine.
func TestChunkScanDepthLimit(t *testing.T) {
	meta := strings.Repeat(`[{"a":`, maxChunkScanDepth/2-1) + `[]` + strings.Repeat(`}]`, maxChunkScanDepth/2-1)
	l := chunkPrefix + `{"type":"text","text":"x"},"_meta":` + meta + `}}}`
	if res := checkScan(t, []byte(l)); res != OK {
		t.Fatalf("scanner gave %d for nesting at the limit", res)
	}
}

// TestChunkScanAllocs: the full scan of a common line costs two
// allocations: the copy of its params its plain strings refer into, and
// its text, which has an escape, decoded.
func TestChunkScanAllocs(t *testing.T) {
	line := benchLines(7)[6]
	var c Chunk
	allocs := testing.AllocsPerRun(100, func() {
		if scanOnce(line, false, &c) != OK {
			t.Fatal("declined")
		}
	})
	if allocs > 2 {
		t.Errorf("%v allocations per line, want at most 2", allocs)
	}
}

// FuzzChunkScan checks that whenever the scanner accepts a line, the result
// is what the general path decodes, and that it accepts the chunk lines an
// ordinary encoder writes.
func FuzzChunkScan(f *testing.F) {
	f.Add([]byte("plain"))
	f.Add([]byte(`esc \" \\ \/ \b \f \n \r \t \u0041 \ud83d\ude00 \ud83d \ude00 \ud83d\u0041`))
	f.Add([]byte("bad utf8 \xff\xc3\xed\xa0\x80"))
	f.Add([]byte(chunkLineJSON("s", "whole line")))
	f.Add(benchLines(7)[6])
	f.Add([]byte(chunkPrefix + `{"type":"text","text":"x","_meta":{"a":[1,-2.5e+3,true,false,null]}},"messageId":null,"_meta":[]},"_meta":{}}}`))
	f.Add([]byte(chunkPrefix + `{"type":"text","text":"t","annotations":{"priority":1}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The input as a whole line.
		checkScan(t, data)

		// The input as raw JSON in a string, or as a value, in the common line.
		for _, tmpl := range []string{
			chunkPrefix + `{"type":"text","text":"%"},"messageId":"m"}}}`,
			chunkPrefix + `{"type":"text","text":"x"},"messageId":"%"}}}`,
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"%","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"x"}}}}`,
			chunkPrefix + `{"type":"text","text":"x","_meta":%}}}}`,
			chunkPrefix + `{"type":"text","text":"x"},"messageId":%}}}`,
			chunkPrefix + `{"type":"text","text":"x"},"_meta":%},"_meta":%}}`,
			chunkPrefix + `{"type":"text","text":"x",%}}}}`,
			chunkPrefix + `%}}}`,
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":%}}`,
			`{"jsonrpc":"2.0","method":"session/update","params":%}`,
			`{"jsonrpc":"2.0","method":"session/update",%}`,
		} {
			checkScan(t, []byte(strings.ReplaceAll(tmpl, "%", string(data))))
		}

		// Encoder-written lines from arbitrary strings must be taken, with the
		// strings as encoding/json reads them back.
		parts := strings.SplitN(string(data), "\x00", 3)
		for len(parts) < 3 {
			parts = append(parts, "")
		}
		type content struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		type update struct {
			SessionUpdate string  `json:"sessionUpdate"`
			Content       content `json:"content"`
			MessageID     *string `json:"messageId,omitempty"`
		}
		type params struct {
			SessionID string `json:"sessionId"`
			Update    update `json:"update"`
		}
		msg := struct {
			JSONRPC string `json:"jsonrpc"`
			Method  string `json:"method"`
			Params  params `json:"params"`
		}{"2.0", methodSessionUpdate, params{parts[0], update{updateAgentMessageChunk, content{contentText, parts[1]}, &parts[2]}}}
		line, err := json.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		if res := checkScan(t, line); res != OK {
			t.Fatalf("scanner gave %d for an encoder-written line %q", res, line)
		}
		var c Chunk
		scanOnce(line, false, &c)
		if got := c.Text; utf8.ValidString(parts[1]) && got != parts[1] {
			t.Fatalf("text %q, want %q", got, parts[1])
		}
	})
}

// TestChunkScanRandomLines builds chunk lines from random parts (keys in any
// order, case-folded and duplicate keys, escapes, odd values, bad JSON now
// and then) and checks every line the scanner accepts against the general
// path. The byte-level fuzzer rarely reaches these shapes by itself.
func TestChunkScanRandomLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 30000
	if testing.Short() || raceEnabled {
		n = 5000
	}
	var accepted, fellBack int
	for range n {
		line := randomChunkLine(rng)
		switch checkScan(t, line) {
		case OK:
			accepted++
		case Fallback:
			fellBack++
		}
	}
	t.Logf("%d lines: %d accepted, %d fell back", n, accepted, fellBack)
	if accepted < n/10 || fellBack == 0 {
		t.Errorf("of %d lines %d were accepted and %d fell back: the generator is off", n, accepted, fellBack)
	}
}

func randomChunkLine(rng *rand.Rand) []byte {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	faulty := rng.IntN(2) == 0 // half the lines are meant to be clean
	chance := func(n int) bool { return faulty && rng.IntN(n) == 0 }
	// either picks from good, or now and then (in faulty lines) from bad.
	either := func(good, bad []string) string {
		if chance(4) {
			return pick(bad...)
		}
		return pick(good...)
	}
	ws := func() string {
		if rng.IntN(4) > 0 {
			return ""
		}
		return pick(" ", "\t", "\n", "\r\n ", "  ")
	}
	str := func() string {
		return pick(`"x"`, `""`, `"hello world"`, `"a\nb"`, `"\u00e9\u4e16"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00\ud83d"`,
			`"\ud83dx"`, `"\"\\\/\b\f\r\t"`, "\"\xff\xfe\"", "\"h\xc3\xa9llo\"", "\"\xed\xa0\x80\"", `"\u0000"`, "\"\x7f\"",
			`"sess_01JD8X4"`, `"msg_1"`)
	}
	var value func(depth int) string
	value = func(depth int) string {
		switch rng.IntN(10) {
		case 0, 1:
			return str()
		case 2:
			return pick("0", "-1", "1.5", "-0.0e+1", "12E3", "1e-2")
		case 3:
			return pick("true", "false", "null")
		case 4, 5:
			if depth > 3 {
				return "[]"
			}
			var parts []string
			for range rng.IntN(3) {
				parts = append(parts, ws()+value(depth+1)+ws())
			}
			return "[" + strings.Join(parts, ",") + "]"
		case 6, 7:
			if depth > 3 {
				return "{}"
			}
			var parts []string
			for range rng.IntN(3) {
				parts = append(parts, ws()+str()+ws()+":"+ws()+value(depth+1)+ws())
			}
			return "{" + strings.Join(parts, ",") + "}"
		case 8:
			if chance(8) {
				return pick("tru", "01", "1.", "-", `"\x"`, "\"a\x01\"", `"\u12"`, "[1,]", `{"a"}`, "nul", "+1", "")
			}
			return str()
		}
		return "{}"
	}
	object := func(members map[string]func() string, extra []string) string {
		type kv struct{ k, v string }
		var kvs []kv
		for k, v := range members {
			if chance(12) {
				continue // leave it out
			}
			kvs = append(kvs, kv{k, v()})
			if chance(25) {
				kvs = append(kvs, kv{k, v()}) // duplicate
			}
			if chance(30) {
				kvs = append(kvs, kv{strings.ToUpper(k[:1]) + k[1:], v()}) // folds to k
			}
		}
		for _, k := range extra {
			if chance(6) {
				kvs = append(kvs, kv{k, value(1)})
			}
		}
		rng.Shuffle(len(kvs), func(i, j int) { kvs[i], kvs[j] = kvs[j], kvs[i] })
		var b strings.Builder
		b.WriteString("{" + ws())
		for i, m := range kvs {
			if i > 0 {
				b.WriteString("," + ws())
			}
			b.WriteString(`"` + m.k + `"` + ws() + ":" + ws() + m.v + ws())
		}
		b.WriteString("}")
		return b.String()
	}
	content := func() string {
		return object(map[string]func() string{
			"type": func() string {
				return either([]string{`"text"`, `"text"`, `"text"`, `"image"`, `"resource_link"`}, []string{`"blob"`, `"te\u0078t"`, `5`, `null`})
			},
			"text": func() string {
				if chance(10) {
					return value(1)
				}
				return str()
			},
			"_meta": func() string { return value(1) },
		}, []string{"annotations", "data", "Raw", "zzz", "mimetype", `t\u0065xt`, "x"})
	}
	update := func() string {
		return object(map[string]func() string{
			"sessionUpdate": func() string {
				return either([]string{`"agent_message_chunk"`, `"agent_thought_chunk"`, `"user_message_chunk"`, `"agent_message_chunk"`},
					[]string{`"tool_call"`, `"agent\u005fmessage_chunk"`, `3`})
			},
			"content": func() string {
				if chance(20) {
					return value(1)
				}
				return content()
			},
			"messageId": func() string {
				return either([]string{"null", `"m"`, `"msg_1"`, `"\u00e9"`, "\"\xff\""}, []string{"1", "{}"})
			},
			"_meta": func() string { return value(1) },
		}, []string{"modeId", "other", "zz", `\u006dessageId`})
	}
	params := func() string {
		return object(map[string]func() string{
			"sessionId": func() string {
				if chance(15) {
					return value(1)
				}
				return str()
			},
			"update": func() string {
				if chance(30) {
					return value(1)
				}
				return update()
			},
			"_meta": func() string { return value(1) },
		}, []string{"extra", "sessionid", "ſessionId"})
	}
	line := ws() + object(map[string]func() string{
		"jsonrpc": func() string { return either([]string{`"2.0"`}, []string{`"1.0"`, `2`, `null`}) },
		"method": func() string {
			return either([]string{`"session/update"`}, []string{`"session\/update"`, `"session/prompt"`})
		},
		"params": params,
	}, []string{"id", "result", "error", "x", "ID", "\u212a"}) + ws()
	if chance(40) {
		line += pick("x", "{}", "\x00", ",")
	}
	return []byte(line)
}
