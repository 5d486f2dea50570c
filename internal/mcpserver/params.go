package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// paramTypes are the params of the calls whose params the SDK requires and
// decodes into a struct: for these, checkParams answers bad params itself,
// because the SDK's own refusal is -32600 for missing params (not -32602)
// and carries Go decoder text ("json: cannot unmarshal … into Go struct
// field … of type …") for a wrong type.
var paramTypes = map[string]func() any{
	"initialize":     func() any { return new(mcp.InitializeParams) },
	"tools/call":     func() any { return new(mcp.CallToolParams) },
	"resources/read": func() any { return new(mcp.ReadResourceParams) },
}

// checkParams returns the -32602 Invalid params message for a call to one
// of paramTypes' methods whose params are missing, null, not an object, or
// hold a field of the wrong JSON type ("" when they are usable). The message
// names the method, the field (dotted path under params) and the expected
// JSON type, never a Go type. Decoding uses encoding/json on the SDK's own
// params types, so a field it accepts is one the SDK accepts.
func checkParams(raw []byte) string {
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(raw, &m) != nil || len(m.ID) == 0 {
		return ""
	}
	newP, ok := paramTypes[m.Method]
	if !ok {
		return ""
	}
	p := bytes.TrimSpace(m.Params)
	if len(p) == 0 || string(p) == "null" {
		return fmt.Sprintf(`Invalid params: %s needs "params", an object (MCP %s)`, m.Method, specRef(m.Method))
	}
	if p[0] != '{' {
		return fmt.Sprintf(`Invalid params: %s "params" must be an object, got %s`, m.Method, jsonKind(p))
	}
	if err := json.Unmarshal(p, newP()); err != nil {
		return fmt.Sprintf("Invalid params: %s %s", m.Method, describeDecodeError(err))
	}
	return ""
}

func specRef(method string) string {
	if method == "initialize" {
		return "basic/lifecycle: protocolVersion, capabilities, clientInfo"
	}
	return "schema"
}

// describeDecodeError turns a JSON decoding error into words a client can
// act on: `params.protocolVersion must be a string, got number`. Errors
// other than a type mismatch are described without Go type names.
func describeDecodeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := "params"
		if te.Field != "" {
			field += "." + te.Field
		}
		return fmt.Sprintf("%s must be %s, got %s", field, jsonTypeName(te.Type), te.Value)
	}
	return `"params" is not valid for this method`
}

// jsonTypeName names the JSON type that decodes into t, with its article.
func jsonTypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "another JSON type"
}

// jsonKind names the JSON type of the valid JSON value v.
func jsonKind(v []byte) string {
	switch v[0] {
	case '"':
		return "string"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}
