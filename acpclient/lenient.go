package acpclient

import (
	"encoding/json"
	"errors"
)

// lenientUnmarshal decodes data into v, tolerating fields of the wrong type:
// encoding/json keeps decoding past an UnmarshalTypeError and leaves such a
// field at its zero value, which is what ACP asks of clients (a malformed
// optional field falls back to its default; the message is not rejected).
// Syntax errors still fail.
func lenientUnmarshal(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return nil
	}
	return err
}
