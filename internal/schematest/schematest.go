// Package schematest checks ACP messages against the official JSON schema
// (../shared/acp/schema.json next to the module root) in tests.
//
// The schema describes params and results per method (every $defs entry
// carries x-method and x-side annotations), but a JSON-RPC response does not
// name its method. A Validator therefore checks requests, notifications and
// the envelope of every message on its own, and a Tracker, which sees the
// lines of one connection in order, also checks each result against the
// schema of the request it answers.
//
// Methods the schema does not know (extension methods starting with "_",
// legacy ones such as session/set_model, vendor ones such as session/compact)
// are not failures: their params and results are skipped, and only the
// JSON-RPC envelope is checked.
package schematest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// EnvSchemaPath names an environment variable that, when set, overrides where
// the schema is looked for.
const EnvSchemaPath = "ACPHOST_ACP_SCHEMA"

// Direction says which peer wrote a message.
type Direction int

const (
	// FromClient marks a message the client sent to the agent.
	FromClient Direction = iota
	// FromAgent marks a message the agent sent to the client.
	FromAgent
)

func (d Direction) String() string {
	if d == FromAgent {
		return "agent→client"
	}
	return "client→agent"
}

// methodSchemas holds the compiled schemas of one method.
type methodSchemas struct {
	params *jsonschema.Schema // request or notification params
	result *jsonschema.Schema // nil for notifications
}

// Validator checks single ACP messages. It is immutable and safe for
// concurrent use.
type Validator struct {
	path string
	// requests and notifications hold, per sending direction, the methods
	// that the schema defines for that direction.
	requests      [2]map[string]methodSchemas
	notifications [2]map[string]methodSchemas
	requestID     *jsonschema.Schema
	errorObject   *jsonschema.Schema
}

// loader compiles one schema file once per test process.
type loader struct {
	once     sync.Once
	v        *Validator
	err      error
	notFound string // where the schema was looked for, if it was not found
}

var stable, unstable loader

// Load returns the Validator for the workspace's stable schema.json,
// compiled once per test process. When the schema cannot be found, Load
// skips the test.
func Load(t testing.TB) *Validator {
	t.Helper()
	return stable.load(t, "")
}

// LoadUnstable is Load for schema.unstable.json (stable plus draft
// features such as compaction updates), found next to schema.json.
func LoadUnstable(t testing.TB) *Validator {
	t.Helper()
	return unstable.load(t, "schema.unstable.json")
}

func (l *loader) load(t testing.TB, sibling string) *Validator {
	t.Helper()
	l.once.Do(func() {
		path, err := Find()
		if err == nil && sibling != "" {
			path = filepath.Join(filepath.Dir(path), sibling)
			if _, statErr := os.Stat(path); statErr != nil {
				err = errors.New(path)
			}
		}
		if err != nil {
			l.notFound = err.Error()
			return
		}
		l.v, l.err = New(path)
	})
	if l.notFound != "" {
		t.Skipf("ACP schema not found at %s: schema validation skipped (run inside the acphost workspace)", l.notFound)
	}
	if l.err != nil {
		t.Fatalf("schematest: %v", l.err)
	}
	return l.v
}

// Find returns the path of schema.json: $ACPHOST_ACP_SCHEMA if set, else
// ../shared/acp/schema.json relative to the directory holding go.mod, found by
// walking up from the working directory. The error names the place looked at.
func Find() (string, error) {
	if p := os.Getenv(EnvSchemaPath); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s (from $%s)", p, EnvSchemaPath)
		}
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("an unknown place (working directory: %v)", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "..", "shared", "acp", "schema.json")
			if _, err := os.Stat(p); err != nil {
				return "", errors.New(filepath.Clean(p))
			}
			return filepath.Clean(p), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("../shared/acp/schema.json next to a go.mod (no go.mod above the working directory)")
		}
		dir = parent
	}
}

// New compiles the schema at path.
func New(path string) (*Validator, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var meta struct {
		Defs map[string]struct {
			Method string `json:"x-method"`
			Side   string `json:"x-side"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	url := "file://" + filepath.ToSlash(abs)
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	compile := func(def string) (*jsonschema.Schema, error) {
		s, err := c.Compile(url + "#/$defs/" + def)
		if err != nil {
			return nil, fmt.Errorf("%s: compiling %s: %w", path, def, err)
		}
		return s, nil
	}

	v := &Validator{path: path}
	for d := range v.requests {
		v.requests[d] = map[string]methodSchemas{}
		v.notifications[d] = map[string]methodSchemas{}
	}
	// x-side names the side that handles the method: "agent" methods are
	// sent by the client, "client" methods by the agent, "protocol" ones by
	// either.
	senders := map[string][]Direction{
		"agent":    {FromClient},
		"client":   {FromAgent},
		"protocol": {FromClient, FromAgent},
	}
	results := map[string]*jsonschema.Schema{} // side + " " + method
	for name, def := range meta.Defs {
		if def.Method == "" || !strings.HasSuffix(name, "Response") {
			continue
		}
		s, err := compile(name)
		if err != nil {
			return nil, err
		}
		results[def.Side+" "+def.Method] = s
	}
	for name, def := range meta.Defs {
		if def.Method == "" {
			continue
		}
		var table *[2]map[string]methodSchemas
		switch {
		case strings.HasSuffix(name, "Request"):
			table = &v.requests
		case strings.HasSuffix(name, "Notification"):
			table = &v.notifications
		default:
			continue
		}
		s, err := compile(name)
		if err != nil {
			return nil, err
		}
		ms := methodSchemas{params: s}
		if table == &v.requests {
			ms.result = results[def.Side+" "+def.Method]
			if ms.result == nil {
				return nil, fmt.Errorf("%s: no response definition for request %s", path, def.Method)
			}
		}
		for _, d := range senders[def.Side] {
			table[d][def.Method] = ms
		}
	}
	if len(v.requests[FromClient]) == 0 || len(v.requests[FromAgent]) == 0 {
		return nil, fmt.Errorf("%s: no x-method annotated request definitions: not an ACP schema?", path)
	}
	if v.requestID, err = compile("RequestId"); err != nil {
		return nil, err
	}
	if v.errorObject, err = compile("Error"); err != nil {
		return nil, err
	}
	return v, nil
}

// Path returns the schema file the Validator was compiled from.
func (v *Validator) Path() string { return v.path }

// Methods returns the request methods the schema defines for messages sent
// in direction d (e.g. session/prompt for FromClient).
func (v *Validator) Methods(d Direction) []string {
	var out []string
	for m := range v.requests[d] {
		out = append(out, m)
	}
	return out
}

// ValidateClientMessage checks one line the client sent to the agent. A
// response's result is only checked by a Tracker, which knows the method.
func (v *Validator) ValidateClientMessage(line []byte) error {
	_, err := v.validate(FromClient, line, nil)
	return err
}

// ValidateAgentMessage checks one line the agent sent to the client. A
// response's result is only checked by a Tracker, which knows the method.
func (v *Validator) ValidateAgentMessage(line []byte) error {
	_, err := v.validate(FromAgent, line, nil)
	return err
}

// ValidateResult checks the result of a request of the given method sent in
// direction d (so a session/prompt result is ValidateResult(FromClient,
// "session/prompt", result)). Methods unknown to the schema pass.
func (v *Validator) ValidateResult(d Direction, method string, result []byte) error {
	ms, ok := v.requests[d][method]
	if !ok {
		return nil
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(result))
	if err != nil {
		return fmt.Errorf("result of %s: %w", method, err)
	}
	return describe(fmt.Sprintf("result of %s", method), ms.result.Validate(inst))
}

// envelope is what validate learned about a message.
type envelope struct {
	kind   string // "request", "notification" or "response"
	method string
	id     string // compact id, for requests and responses
	result json.RawMessage
}

// validate checks line sent in direction d. For a response, resultMethod (if
// not nil) maps its id to the method of the request it answers.
func (v *Validator) validate(d Direction, line []byte, resultMethod func(id string) (string, bool)) (envelope, error) {
	var env envelope
	line = bytes.TrimRight(line, "\r\n")
	if bytes.ContainsAny(line, "\n") {
		return env, fmt.Errorf("%s message contains a raw newline", d)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return env, fmt.Errorf("%s line is not a JSON object: %w", d, err)
	}
	fail := func(format string, args ...any) (envelope, error) {
		what := env.kind
		if env.method != "" {
			what += " " + env.method
		}
		return env, fmt.Errorf("%s %s: %s", d, what, fmt.Sprintf(format, args...))
	}
	if string(fields["jsonrpc"]) != `"2.0"` {
		return fail(`"jsonrpc" must be "2.0", got %s`, orMissing(fields["jsonrpc"]))
	}
	rawID, hasID := fields["id"]
	rawMethod, hasMethod := fields["method"]
	switch {
	case hasMethod && hasID:
		env.kind = "request"
	case hasMethod:
		env.kind = "notification"
	default:
		env.kind = "response"
	}
	if hasMethod {
		if err := json.Unmarshal(rawMethod, &env.method); err != nil {
			return fail(`"method" must be a string, got %s`, rawMethod)
		}
	}
	if hasID {
		if err := v.checkValue(v.requestID, rawID); err != nil {
			return fail("invalid id %s: %v", rawID, err)
		}
		env.id = compactID(rawID)
	}
	_, hasResult := fields["result"]
	rawError, hasError := fields["error"]

	switch env.kind {
	case "request", "notification":
		if hasResult || hasError {
			return fail(`a %s must not carry "result" or "error"`, env.kind)
		}
		if env.kind == "request" && string(rawID) == "null" {
			return fail("a request must not use a null id")
		}
		table := v.notifications
		if env.kind == "request" {
			table = v.requests
		}
		ms, ok := table[d][env.method]
		if !ok {
			if other := table[1-d][env.method]; other.params != nil {
				return fail("method is defined for %s only", 1-d)
			}
			return env, nil // an extension or legacy method: not in the schema
		}
		params := fields["params"]
		if len(params) == 0 || string(params) == "null" {
			params = json.RawMessage("{}")
		}
		if err := v.checkValue(ms.params, params); err != nil {
			return fail("params: %v", err)
		}
	case "response":
		if !hasID {
			return fail(`a response needs an "id"`)
		}
		if hasResult == hasError {
			return fail(`a response needs exactly one of "result" and "error"`)
		}
		if hasError {
			if err := v.checkValue(v.errorObject, rawError); err != nil {
				return fail("error: %v", err)
			}
			return env, nil
		}
		env.result = fields["result"]
		if resultMethod == nil {
			return env, nil
		}
		method, ok := resultMethod(env.id)
		if !ok {
			return env, nil
		}
		env.method = method
		// The response travels in direction d, so the request went the
		// other way.
		if ms, ok := v.requests[1-d][method]; ok {
			if err := v.checkValue(ms.result, env.result); err != nil {
				return fail("result of %s: %v", method, err)
			}
		}
	}
	return env, nil
}

func (v *Validator) checkValue(s *jsonschema.Schema, raw []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	return describe("", s.Validate(inst))
}

// describe turns a jsonschema error into one readable line: the innermost
// failures with their instance locations.
func describe(prefix string, err error) error {
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var msgs []string
	seen := map[string]bool{}
	for _, m := range leaves(ve.DetailedOutput()) {
		if !seen[m] {
			seen[m] = true
			msgs = append(msgs, m)
		}
	}
	msg := strings.Join(msgs, "; ")
	if prefix != "" {
		msg = prefix + ": " + msg
	}
	return errors.New(msg)
}

// leaves returns "at /path: message" for each innermost failure under u.
// Unions in the schema are anyOf lists whose branches are told apart by a
// const (e.g. "sessionUpdate": "plan"); a branch that failed on such a const
// is another variant, not the one meant, so it is left out unless every
// branch failed that way.
func leaves(u *jsonschema.OutputUnit) []string {
	if len(u.Errors) == 0 {
		if u.Error == nil {
			return nil
		}
		loc := u.InstanceLocation
		if loc == "" {
			loc = "/"
		}
		return []string{fmt.Sprintf("at %s: %s", loc, u.Error.String())}
	}
	var meant, all []string
	for i := range u.Errors {
		branch := leaves(&u.Errors[i])
		all = append(all, branch...)
		if !failedOnConst(u, &u.Errors[i]) {
			meant = append(meant, branch...)
		}
	}
	if len(meant) == 0 {
		return all
	}
	return meant
}

// failedOnConst reports whether branch, a child of union, failed on the
// const of one of its own properties (its discriminator), the mark of a
// variant that does not apply. A branch with a single failure is collapsed
// into that failure by the validator, so both shapes are recognised.
func failedOnConst(union, branch *jsonschema.OutputUnit) bool {
	isDiscriminator := func(base, loc string) bool {
		rest, ok := strings.CutPrefix(loc, base+"/properties/")
		return ok && strings.HasSuffix(rest, "/const") && strings.Count(rest, "/") == 1
	}
	if len(branch.Errors) == 0 {
		rest, ok := strings.CutPrefix(branch.KeywordLocation, union.KeywordLocation+"/")
		if !ok {
			return false
		}
		index, _, _ := strings.Cut(rest, "/")
		return isDiscriminator(union.KeywordLocation+"/"+index, branch.KeywordLocation)
	}
	for _, c := range branch.Errors {
		if len(c.Errors) == 0 && isDiscriminator(branch.KeywordLocation, c.KeywordLocation) {
			return true
		}
	}
	return false
}

func orMissing(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	return string(raw)
}

func compactID(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// Tracker validates the lines of one connection, in the order they crossed
// it, and checks each response's result against the request it answers. It
// is safe for concurrent use, but lines must be fed in wire order per
// direction and a request before its response.
type Tracker struct {
	v  *Validator
	mu sync.Mutex
	// sent holds, per direction, the methods of requests sent in that
	// direction and not yet answered, by compact id.
	sent [2]map[string]string
}

// NewTracker returns a Tracker for one connection.
func (v *Validator) NewTracker() *Tracker {
	return &Tracker{v: v, sent: [2]map[string]string{{}, {}}}
}

// ClientLine checks a line the client sent.
func (tr *Tracker) ClientLine(line []byte) error { return tr.Line(FromClient, line) }

// AgentLine checks a line the agent sent.
func (tr *Tracker) AgentLine(line []byte) error { return tr.Line(FromAgent, line) }

// Line checks a line sent in direction d.
func (tr *Tracker) Line(d Direction, line []byte) error {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	lookup := func(id string) (string, bool) {
		m, ok := tr.sent[1-d][id]
		return m, ok
	}
	env, err := tr.v.validate(d, line, lookup)
	switch env.kind {
	case "request":
		tr.sent[d][env.id] = env.method
	case "response":
		delete(tr.sent[1-d], env.id)
	}
	return err
}
