package state

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
)

// FuzzDecode feeds the same bytes, as read from Redis, to every decoder of
// stored values: none panics, every refusal is state_corrupt, and what is
// accepted re-encodes to itself (entries: to an equal entry), so a decoder
// never accepts a value it would not have written. A stored page is
// accepted only under a store name (never a path outside the store).
func FuzzDecode(f *testing.F) {
	e, _ := EncodeEntry(sampleEntry())
	for _, s := range [][]byte{
		e, EncodePage("a.test-0123456789.md", "text\n"), EncodeMemo([]byte(`{"Rows":[]}`)),
		[]byte(lockValue("0123456789abcdef0123456789abcdef")),
		[]byte("ghp1 4 ../../etc/passwd\nroot"), []byte("gh1 1 {\"content\":"), []byte("ghm1 3\n{}"), {},
	} {
		f.Add(s, "a.test-0123456789.md")
	}
	f.Fuzz(func(t *testing.T, b []byte, want string) {
		corrupt := func(what string, err error) {
			if e := reason.As(err); e == nil || e.Code != reason.StateCorrupt {
				t.Fatalf("%s: error %v is not state_corrupt", what, err)
			}
		}
		if got, err := DecodeEntry("k", b); err != nil {
			corrupt("entry", err)
		} else {
			again, err := EncodeEntry(got)
			if err != nil {
				t.Fatal(err)
			}
			got2, err := DecodeEntry("k", again)
			if err != nil || got2.Content != got.Content || got2.Title != got.Title || !got2.FetchedAt.Equal(got.FetchedAt) ||
				got2.URL != got.URL || got2.FinalURL != got.FinalURL || !bytes.Equal(got2.Extra, got.Extra) {
				t.Fatalf("entry does not round-trip: %+v vs %+v (%v)", got, got2, err)
			}
		}
		if text, err := DecodePage("k", want, b); err != nil {
			corrupt("page", err)
		} else {
			if !truncate.IsStoreName(want) || strings.ContainsAny(want, "/\\") {
				t.Fatalf("page accepted under %q, not a store name", want)
			}
			if !bytes.Equal(EncodePage(want, text), b) {
				t.Fatalf("page does not round-trip")
			}
		}
		if p, err := DecodeMemo("k", b); err != nil {
			corrupt("memo", err)
		} else if !bytes.Equal(EncodeMemo(p), b) {
			t.Fatalf("memo does not round-trip")
		}
		if tok, err := DecodeLock("k", b); err != nil {
			corrupt("lock", err)
		} else if lockValue(tok) != string(b) {
			t.Fatalf("lock does not round-trip")
		}
	})
}

// FuzzParseURL: ParseURL never panics, refuses with state_bad_url only,
// and an accepted target prints without userinfo.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"redis://h:6379/0", "rediss://:pw@h/1", "redis://u:p@[::1]:7/15", "redis://h/16", "http://x", "redis://%zz", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tg, err := ParseURL(raw, "", EnvRedisURL)
		if err != nil {
			if e := reason.As(err); e == nil || e.Code != reason.StateBadURL {
				t.Fatalf("ParseURL(%q): %v is not state_bad_url", raw, err)
			}
			return
		}
		if s := tg.String(); strings.Contains(s, "@") || tg.DB < 0 || tg.DB > 15 {
			t.Fatalf("ParseURL(%q) = %q", raw, s)
		}
	})
}
