package acpclient

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// UnmarshalJSON decodes the request leniently, as every ACP message is,
// except for line and limit: the schema makes them uint32, and a value that
// is not one (2^63, 1e400, 1.5, "3", -1) is an error. Falling back to
// "unset" there would answer a request for line 2^64+5 with line 1, a
// plausible but wrong answer; the agent gets invalid params instead.
func (r *ReadTextFileRequest) UnmarshalJSON(data []byte) error {
	type plain ReadTextFileRequest // without this method
	var aux struct {
		plain
		Line  json.RawMessage `json:"line"`
		Limit json.RawMessage `json:"limit"`
	}
	if err := lenientUnmarshal(data, &aux); err != nil {
		return err
	}
	line, err := lineParam("line", aux.Line)
	if err != nil {
		return err
	}
	limit, err := lineParam("limit", aux.Limit)
	if err != nil {
		return err
	}
	*r = ReadTextFileRequest(aux.plain)
	r.Line, r.Limit = line, limit
	return nil
}

// lineParam parses an optional uint32 given as a JSON integer literal; null
// or absent is nil.
func lineParam(name string, raw json.RawMessage) (*int, error) {
	s := string(raw)
	if s == "" || s == "null" {
		return nil, nil
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("%s must be an integer from 0 to %d, got %.40s", name, uint32(math.MaxUint32), s)
	}
	v := int(n)
	return &v, nil
}
