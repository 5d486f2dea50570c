// Package vectors loads the behavioural test vectors kept in testdata/hermes-vectors.json
// at the module root (converted from the described system's spec; they are facts).
// Test code only: each package's table tests load the areas it owns and assert the count,
// so no vector is skipped silently.
package vectors

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Vector is one input/expected case. Input and Expected stay raw JSON so each
// area's test decodes them into its own typed struct.
type Vector struct {
	Area     string          `json:"area"`
	Input    json.RawMessage `json:"input"`
	Expected json.RawMessage `json:"expected"`
	Note     string          `json:"note"`
}

// Path returns the absolute path of testdata/hermes-vectors.json in this module.
func Path() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "hermes-vectors.json")
}

// All loads every vector; it fails the test on any error.
func All(t testing.TB) []Vector {
	t.Helper()
	b, err := os.ReadFile(Path())
	if err != nil {
		t.Fatalf("read vectors: %v", err)
	}
	var vs []Vector
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatalf("decode vectors: %v", err)
	}
	return vs
}

// Area returns the vectors of one area and fails the test unless exactly want
// of them exist (so a vector added or lost upstream is noticed).
func Area(t testing.TB, area string, want int) []Vector {
	t.Helper()
	var out []Vector
	for _, v := range All(t) {
		if v.Area == area {
			out = append(out, v)
		}
	}
	if len(out) != want {
		t.Fatalf("area %s: %d vectors, want %d", area, len(out), want)
	}
	return out
}

// Decode unmarshals raw into v, failing the test on error.
func Decode(t testing.TB, raw json.RawMessage, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}
