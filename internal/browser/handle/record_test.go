package handle

import (
	"strings"
	"testing"
	"time"
)

func goodRecord() Record {
	return Record{Version: RecordVersion, Handle: New(), Node: strings.Repeat("a", 32), Context: "0F1E2D3C4B5A69788796A5B4C3D2E1F0",
		Target: "A1B2C3D4E5F60718293A4B5C6D7E8F90", Proxy: strings.Repeat("b", 32), Key: "mcp-principal-0123", Owner: "mcp-principal-0123",
		Principal: "0123456789abcdef", Active: true, Navs: 2, NextRef: 7, Frames: []Frame{{K: 1, ID: "FA0E", Next: 3}}, SnapHash: SnapHash("- heading \"x\" [ref=e1]"),
		LastActive: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC).UnixMilli()}
}

// TestDecode: a record round-trips; anything Gatehouse would not have
// written is refused (the handle not the key's, an unknown field, trailing
// data, out-of-range fields, an oversized value).
func TestDecode(t *testing.T) {
	r := goodRecord()
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(r.Handle, b)
	if err != nil || got.Handle != r.Handle || got.NextRef != 7 || len(got.Frames) != 1 {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	r.Suspect, r.Gen = true, 3
	if b2, err := r.Encode(); err != nil {
		t.Fatal(err)
	} else if got, err := Decode(r.Handle, b2); err != nil || !got.Suspect || got.Gen != 3 {
		t.Fatalf("suspect and gen round trip: %+v, %v", got, err)
	}
	if _, err := Decode(New(), b); err == nil {
		t.Error("a record under another handle's key decoded")
	}
	bad := map[string]func(r *Record){
		"version":      func(r *Record) { r.Version = 3 },
		"node":         func(r *Record) { r.Node = "../../x" },
		"context":      func(r *Record) { r.Context = "" },
		"target":       func(r *Record) { r.Target = "a b" },
		"key":          func(r *Record) { r.Key = "" },
		"owner":        func(r *Record) { r.Owner = "a\x1bb" },
		"principal":    func(r *Record) { r.Principal = "" },
		"navs":         func(r *Record) { r.Navs = -1 },
		"next_ref":     func(r *Record) { r.NextRef = 0 },
		"frame k":      func(r *Record) { r.Frames = []Frame{{K: 0, ID: "F", Next: 1}} },
		"frame dup":    func(r *Record) { r.Frames = []Frame{{K: 1, ID: "F", Next: 1}, {K: 1, ID: "G", Next: 1}} },
		"snap_hash":    func(r *Record) { r.SnapHash = "xyz" },
		"last_active":  func(r *Record) { r.LastActive = 5 },
		"many frames":  func(r *Record) { r.Frames = make([]Frame, MaxFrames+1) },
		"huge counter": func(r *Record) { r.NextRef = MaxCounter + 1 },
		"v1 suspect":   func(r *Record) { r.Version, r.Suspect = 1, true },
		"v1 gen":       func(r *Record) { r.Version, r.Suspect, r.Gen = 1, false, 2 },
		"gen":          func(r *Record) { r.Gen = -1 },
	}
	v1 := goodRecord()
	v1.Version, v1.Suspect, v1.Gen = 1, false, 0
	if err := v1.Validate(); err != nil {
		t.Errorf("a version 1 record (rolling upgrade) refused: %v", err)
	}
	for name, f := range bad {
		x := goodRecord()
		f(&x)
		if x.Validate() == nil {
			t.Errorf("%s: Validate accepted %+v", name, x)
		}
	}
	for name, v := range map[string]string{
		"unknown field": strings.Replace(string(b), `{"v":2,`, `{"v":2,"extra":1,`, 1),
		"trailing":      string(b) + `{}`,
		"wrong type":    strings.Replace(string(b), `"navs":2`, `"navs":"2"`, 1),
		"oversized":     string(b) + strings.Repeat(" ", MaxRecordBytes),
		"not json":      "ghp1 3 x\nabc",
	} {
		if _, err := Decode(r.Handle, []byte(v)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// FuzzDecode: no input panics, and whatever decodes re-encodes to a record
// that decodes to the same record and passes Validate.
func FuzzDecode(f *testing.F) {
	r := goodRecord()
	b, _ := r.Encode()
	f.Add(r.Handle, b)
	f.Add(r.Handle, []byte(`{"v":2}`))
	f.Add(New(), []byte(`[]`))
	f.Fuzz(func(t *testing.T, h string, b []byte) {
		got, err := Decode(h, b)
		if err != nil {
			return
		}
		if got.Validate() != nil || got.Handle != h || !Valid(h) {
			t.Fatalf("Decode accepted an invalid record %+v", got)
		}
		enc, err := got.Encode()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Decode(h, enc)
		if err != nil {
			t.Fatal(err)
		}
		e1, _ := again.Encode()
		if string(e1) != string(enc) {
			t.Fatalf("round trip: %s vs %s", e1, enc)
		}
	})
}
