package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// special_gen.go is what ianagen writes from the registry copies: a copy
// refreshed (or edited) without regenerating is caught here, offline.
func TestGeneratedUpToDate(t *testing.T) {
	want, err := generateFrom("..")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "special_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("internal/urlsafe/special_gen.go is stale: run go generate ./internal/urlsafe")
	}
}
