package principal

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func hashOf(tok string) string {
	s := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(s[:])
}

func TestTokensParseAndLookup(t *testing.T) {
	text := "# principals\n\n  alice : " + hashOf("tok-a") + "\nbob:" + strings.ToUpper(hashOf("tok-b")) + "\n"
	toks, err := ParseTokens([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if got := toks.Names(); len(got) != 2 || got[0] != "alice" || got[1] != "bob" {
		t.Fatalf("names %v", got)
	}
	for tok, want := range map[string]string{"tok-a": "alice", "tok-b": "bob"} {
		if name, ok := toks.Lookup(tok); !ok || name != want {
			t.Errorf("Lookup(%q) = %q %v", tok, name, ok)
		}
	}
	for _, bad := range []string{"", "tok-c", "tok-a ", hashOf("tok-a")} {
		if name, ok := toks.Lookup(bad); ok {
			t.Errorf("Lookup(%q) = %q", bad, name)
		}
	}
	if _, ok := SingleToken("s3cret").Lookup("s3cret"); !ok {
		t.Error("SingleToken does not accept its token")
	}
	if name, _ := SingleToken("s3cret").Lookup("s3cret"); name != Default {
		t.Errorf("SingleToken principal %q", name)
	}
}

// TestTokensLookupConstantTime: Lookup compares the hash with every entry in
// constant time whichever matches (no early exit that would tell by timing
// which entry, or which prefix, matched).
func TestTokensLookupConstantTime(t *testing.T) {
	var lines []string
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		lines = append(lines, n+":"+hashOf("tok-"+n))
	}
	toks, err := ParseTokens([]byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	constantTimeCompare = func(x, y []byte) int { n++; return subtle.ConstantTimeCompare(x, y) }
	defer func() { constantTimeCompare = subtle.ConstantTimeCompare }()
	for _, tok := range []string{"tok-a", "tok-c", "tok-e", "nope"} {
		n = 0
		toks.Lookup(tok)
		if n != 5 {
			t.Errorf("Lookup(%q) compared %d hashes, want all 5", tok, n)
		}
	}
}

func TestTokensFileErrors(t *testing.T) {
	h := hashOf("x")
	for _, c := range []struct{ text, want string }{
		{"alice:" + h + "\nbob:" + hashOf("y") + "\njunk\n", "line 3: want NAME:SHA256-HEX-OF-TOKEN"},
		{"alice:" + h + "\nalice:" + hashOf("y"), `line 2: the name "alice" is already used on line 1`},
		{"alice:" + h + "\nbob:" + h, "line 2: the hash is already used on line 1"},
		{"al ice:" + h, "line 1: the name"},
		{"-x:" + h, "line 1: the name"},
		{"alice:" + h + "00", "line 1: the hash"},
		{"# nothing\n\n", "no principal"},
		{"alice:" + hashOf("y") + "\nDefault:" + h, `line 2: the name "Default" is reserved`},
	} {
		_, err := ParseTokens([]byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), h) {
			t.Errorf("%q: the error shows the hash: %v", c.text, err)
		}
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "tokens")
	os.WriteFile(p, []byte("alice:"+h+"\n"), 0o600)
	if _, err := ReadTokensFile(p); err != nil {
		t.Fatalf("mode 0600: %v", err)
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o620} {
		os.Chmod(p, mode)
		if _, err := ReadTokensFile(p); err == nil || !strings.Contains(err.Error(), "chmod 600") || !strings.Contains(err.Error(), p) {
			t.Errorf("mode %o: %v", mode, err)
		}
	}
	if _, err := ReadTokensFile(dir); err == nil {
		t.Error("a directory was accepted")
	}
	if _, err := ReadTokensFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file was accepted")
	}
}

func TestLocalLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewLocal(Limits{MaxCalls: 2, Rate: 1, Burst: 3})
	l.now = func() time.Time { return now }
	ctx := context.Background()
	r1, err := l.Acquire(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := l.Acquire(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	var ref *Refusal
	if _, err := l.Acquire(ctx, "x"); !errors.As(err, &ref) || ref.Reason != "too_many_calls" || ref.RetryAfter <= 0 || !strings.Contains(ref.Message, "mcp.principal_max_calls") {
		t.Fatalf("over the cap: %v", err)
	}
	// Another principal has its own cap and bucket.
	ry, err := l.Acquire(ctx, "y")
	if err != nil {
		t.Fatalf("y: %v", err)
	}
	ry()
	r1()
	r1() // a second release is a no-op
	r3, err := l.Acquire(ctx, "x")
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	r2()
	r3()
	// Three tokens spent at t=1000: the fourth call waits a second.
	if _, err := l.Acquire(ctx, "x"); !errors.As(err, &ref) || ref.Reason != "rate_limited" || ref.RetryAfter <= 0 || ref.RetryAfter > time.Second {
		t.Fatalf("over the rate: %v", err)
	}
	now = now.Add(time.Second)
	r4, err := l.Acquire(ctx, "x")
	if err != nil {
		t.Fatalf("a second later: %v", err)
	}
	r4()
	if RetryAfterSeconds(1500*time.Millisecond) != 2*time.Second || RetryAfterSeconds(0) != time.Second {
		t.Error("RetryAfterSeconds does not round up to whole seconds ≥ 1")
	}
}

// TestLocalSetLimits: new limits (a reloaded config.yaml) apply to the next
// calls, also of principals already seen.
func TestLocalSetLimits(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewLocal(Limits{MaxCalls: 1, Rate: 0.001, Burst: 1})
	l.now = func() time.Time { return now }
	ctx := context.Background()
	r, err := l.Acquire(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, "x"); err == nil {
		t.Fatal("over the cap admitted")
	}
	r()
	if _, err := l.Acquire(ctx, "x"); err == nil {
		t.Fatal("over the rate admitted")
	}
	l.SetLimits(Limits{MaxCalls: 3, Rate: 100, Burst: 3})
	now = now.Add(50 * time.Millisecond) // 5 tokens at the new rate, capped at 3
	for i := range 3 {
		if _, err := l.Acquire(ctx, "x"); err != nil {
			t.Fatalf("call %d under the new limits: %v", i+1, err)
		}
	}
	if got := l.Limits(); got.MaxCalls != 3 || got.Rate != 100 {
		t.Errorf("Limits() = %+v", got)
	}
}
