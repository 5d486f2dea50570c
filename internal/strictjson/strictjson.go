// Package strictjson decodes JSON that Gatehouse reads back from a place
// it does not trust (Redis values, a browser node's records and policies):
// exactly one JSON value, no field the target type does not declare, no
// trailing data. Size caps and range checks stay with the caller, which
// knows its type.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// ErrTrailing is returned when b holds more than one JSON value.
var ErrTrailing = errors.New("trailing data after the JSON value")

// Decode decodes the one JSON value of b into v. An unknown field, a wrong
// type, a syntax error (encoding/json's errors) or trailing data
// (ErrTrailing) is an error; v may then be partly filled.
func Decode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if err := dec.Decode(&json.RawMessage{}); err != io.EOF {
		return ErrTrailing
	}
	return nil
}
