package strictjson

import (
	"errors"
	"testing"
)

func TestDecode(t *testing.T) {
	type rec struct {
		A int    `json:"a"`
		B string `json:"b"`
	}
	for _, c := range []struct {
		in       string
		ok       bool
		trailing bool
	}{
		{`{"a":1,"b":"x"}`, true, false},
		{` {"a":1} `, true, false},
		{`{"a":1,"c":2}`, false, false},
		{`{"a":"1"}`, false, false},
		{`{"a":1}{"a":2}`, false, true},
		{`{"a":1} 7`, false, true},
		{`{"a":1} x`, false, true},
		{`{"a":`, false, false},
		{``, false, false},
	} {
		var r rec
		err := Decode([]byte(c.in), &r)
		if (err == nil) != c.ok || errors.Is(err, ErrTrailing) != c.trailing {
			t.Errorf("Decode(%q) = %v; want ok %v, trailing %v", c.in, err, c.ok, c.trailing)
		}
	}
}
